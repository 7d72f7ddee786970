"""What the golden-set review page shows and accepts: every row of GOLDEN in file order, its
pool with each chunk's sentences, and the review the events file holds; each POSTed event
checked against the row it names before it is appended."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..textkit.sentences import sentences
from .golden import (
    GOLDEN_KINDS,
    MAX_REFERENCE,
    ROLES,
    VERDICTS,
    RowReview,
    acceptable,
    fold_golden,
    golden_digest,
    history_of,
    pool,
    question_text,
    reference_of,
    roles_of,
)
from .labels import LabelFile

__all__ = ["GoldenState"]


@dataclass
class GoldenState:
    """The golden rows under review and their events file."""

    rows: list[dict[str, Any]]
    labels: LabelFile
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    port: int = 0
    page = "golden"

    def __post_init__(self) -> None:
        self.by_id = {r["id"]: r for r in self.rows}
        self.digests = {r["id"]: golden_digest(r) for r in self.rows}

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def current(self) -> dict[str, RowReview | None]:
        events, _ = self.labels.read()
        folded = fold_golden(events)
        return {rid: folded.get(rid, {}).get(d) for rid, d in self.digests.items()}

    def progress(self, states: Mapping[str, RowReview | None]) -> dict[str, int]:
        verdicts = [s.verdict if s else None for s in states.values()]
        return {"accepted": verdicts.count("accept"), "rejected": verdicts.count("reject"),
                "total": len(self.rows)}

    def _review_view(self, row: Mapping[str, Any], state: RowReview | None) -> dict[str, Any]:
        return {"verdict": state.verdict if state else None,
                "reference": reference_of(row, state),
                "edited": state is not None and state.reference is not None,
                "roles": roles_of(row, state),
                "set": sorted(state.roles) if state else []}

    def snapshot(self) -> dict[str, Any]:
        states = self.current()
        out = []
        for row in self.rows:
            items = pool(row)
            for item in items:  # what a person clicks to compose a reference
                item["sentences"] = sentences(item["text"])
            draft = row["draft"] if isinstance(row.get("draft"), dict) else {}
            out.append({"id": row["id"], "digest": self.digests[row["id"]],
                        "history": history_of(row), "question": question_text(row),
                        "draft_reference": row.get("reference") or "",
                        "draft": {"method": draft.get("method"),
                                  "confidence": draft.get("confidence")},
                        "status": row.get("status"), "reason": row.get("reason"),
                        "conflicts": list(row.get("conflicts") or []), "pool": items,
                        "review": self._review_view(row, states[row["id"]])})
        return {"labels": str(self.labels.path), "progress": self.progress(states),
                "rows": out}

    def check_event(self, event: Any) -> dict[str, Any]:
        """The event a POST carries, checked against the row it names; raises
        ``InvalidInput`` saying what is wrong (an accept the row is not ready for, too)."""
        if not isinstance(event, dict):
            raise InvalidInput("expected a JSON object")
        rid = event.get("id")
        if rid not in self.by_id:
            raise InvalidInput(f"unknown row {rid!r}")
        row = self.by_id[rid]
        if event.get("digest") != self.digests[rid]:
            raise InvalidInput(f"row {rid!r} changed since the page loaded; reload it")
        kind = event.get("kind")
        fields = {"verdict": ("verdict",), "edit": ("reference",), "role": ("item", "role")}
        if kind not in GOLDEN_KINDS:
            raise InvalidInput(f"unknown kind {kind!r}")
        out = {"kind": kind, "id": rid, "digest": self.digests[rid],
               **{k: event.get(k) for k in fields[kind]}}
        if kind == "verdict" and out["verdict"] not in (*VERDICTS, None):
            raise InvalidInput(f"verdict {out['verdict']!r}: accept, reject or null")
        if kind == "edit":
            ref = out["reference"]
            if ref is not None and (not isinstance(ref, str) or len(ref) > MAX_REFERENCE):
                raise InvalidInput(f"a reference is a text of at most {MAX_REFERENCE} "
                                   "characters")
        if kind == "role":
            item, n = out["item"], len(pool(row))
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < n:
                raise InvalidInput(f"item index {item!r} out of range")
            if out["role"] not in (*ROLES, None):
                raise InvalidInput(f"role {out['role']!r}: one of {', '.join(ROLES)} or null")
        if kind == "verdict" and out["verdict"] == "accept":
            events, _ = self.labels.read()
            now = fold_golden([*events, {**out, "_line": 0}])[str(rid)][self.digests[rid]]
            why = acceptable(row, now)
            if why is not None:
                raise InvalidInput(why)
        return out

    def answer(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """What a POST answers once ``event`` is appended: the row's review, the progress."""
        states = self.current()
        rid = event["id"]
        return {"review": self._review_view(self.by_id[rid], states[rid]),
                "progress": self.progress(states)}
