"""LABELS: people's labels, one JSON event a line, appended and never rewritten.

An event names the sample (``id``) and the digest of the claims and chunks it was made on,
so a label never silently applies to changed data. Kinds:

- ``{"kind": "claim", "claim": i, "label": "correct"|"wrong"|null, "chunks": [j, ...]}``:
  response claim i is correct or wrong, stated in those chunks (none: in no chunk);
- ``{"kind": "chunk", "chunk": j, "relevant": true|false|null}``: the chunk holds something
  the reference needs;
- ``{"kind": "reference", "claim": i, "in_response": true|false|null, "chunks": [...]}``;
- ``{"kind": "skip", "reason": "..."|null}`` (null takes the skip back);
- ``{"kind": "session", "seed": S, "n": N}``: the review order, so a reopened page resumes it.

Label events also carry ``looked`` (the judge's verdicts were shown before it) and ``at``. The
latest event for a field wins (undo appends the earlier value). Rows without ``kind`` are
per-sample values made elsewhere: ``{"id": "...", "noise_sensitivity_relevant": 0.25}``.

Appends hold an exclusive ``fcntl`` lock and are fsynced, so two tabs or two processes never
interleave a line; a line torn by a crash is skipped (and reported) when read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.catalogue import METRIC_NAMES
from ..errors import InvalidInput

try:  # POSIX; elsewhere appends are still one write each, but unlocked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["EVENT_KINDS", "LabelFile", "SampleLabels", "Labels", "digest_of", "read_labels",
           "sample_key"]

EVENT_KINDS = ("claim", "chunk", "reference", "skip", "session")
_LABELS = ("correct", "wrong")


def sample_key(row: Mapping[str, Any], index: int) -> str:
    """A results row's id, or ``row-INDEX`` when it has none."""
    rid = row.get("id")
    return str(rid) if rid not in (None, "") else f"row-{row.get('index', index)}"


def digest_of(row: Mapping[str, Any]) -> str:
    """What a label was made on: the row's response and reference claims and its chunks."""
    inp = row.get("input") or {}
    parts = [[c.get("text") for c in row.get("response_claims") or ()],
             [c.get("text") for c in row.get("reference_claims") or ()],
             list(inp.get("retrieved_contexts") or ()) or len(row.get("chunks") or ())]
    if inp.get("history"):  # a conversation: other earlier turns, other meaning (single turns keep their digest)
        parts.append(inp["history"])
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


@contextlib.contextmanager
def _locked(fd: int, exclusive: bool) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class LabelFile:
    """The LABELS file: ``append`` one event (locked, fsynced), ``read`` them all."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def append(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Write ``event`` (with ``at`` added) as one line; returns what was written."""
        out = {**event, "at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        line = (json.dumps(out, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            with _locked(fd, exclusive=True):
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a torn last line stays one bad line, not two
                os.write(fd, line)
                os.fsync(fd)
        finally:
            os.close(fd)
        return out

    def read(self) -> tuple[list[dict[str, Any]], list[int]]:
        """Every event, and the numbers of lines that are not JSON objects (torn by a crash)."""
        if not self.path.exists():
            return [], []
        fd = os.open(self.path, os.O_RDONLY)
        try:
            with _locked(fd, exclusive=False):
                data = b""
                while chunk := os.read(fd, 1 << 20):
                    data += chunk
        finally:
            os.close(fd)
        events: list[dict[str, Any]] = []
        bad: list[int] = []
        for number, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError:
                bad.append(number)
                continue
            if isinstance(obj, dict):
                obj["_line"] = number
                events.append(obj)
            else:
                bad.append(number)
        return events, bad


@dataclass
class SampleLabels:
    """One sample's labels as the latest events left them."""

    id: str
    digest: str | None = None
    claims: dict[int, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    chunks: dict[int, bool] = field(default_factory=dict)
    reference: dict[int, tuple[bool, tuple[int, ...]]] = field(default_factory=dict)
    skip: str | None = None
    looked: bool = False  # some label was made after the judge's verdicts were shown

    def empty(self) -> bool:
        return not (self.claims or self.chunks or self.reference)


@dataclass
class Labels:
    """Everything LABELS holds: per sample, the labels of each digest it was labelled on;
    per-sample values made elsewhere; the review session; lines that could not be read."""

    samples: dict[str, dict[str, SampleLabels]] = field(default_factory=dict)
    values: dict[str, dict[str, float | None]] = field(default_factory=dict)
    session: dict[str, Any] | None = None
    bad_lines: list[int] = field(default_factory=list)

    def current(self, key: str, digest: str) -> SampleLabels | None:
        return self.samples.get(key, {}).get(digest)

    def stale(self, key: str, digest: str) -> list[SampleLabels]:
        """Labels of ``key`` made on other claims or chunks than ``digest``'s."""
        return [s for d, s in self.samples.get(key, {}).items() if d != digest and not s.empty()]


def _index(value: Any, what: str, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"LABELS line {line}: field '{what}' must be an index >= 0, got "
                           f"{value!r}")
    return value


def _indices(value: Any, line: int) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise InvalidInput(f"LABELS line {line}: field 'chunks' must be a list of chunk indices")
    return tuple(sorted({_index(v, "chunks", line) for v in value}))


def _flag(value: Any, what: str, line: int) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InvalidInput(f"LABELS line {line}: field '{what}' must be true, false or null")
    return value


def _value_row(event: Mapping[str, Any], line: int) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name, value in event.items():
        if name in ("id", "_line", "at"):
            continue
        if name not in METRIC_NAMES:
            raise InvalidInput(f"LABELS line {line}: unknown field '{name}' in a row of values; "
                               f"use metric names ({', '.join(METRIC_NAMES)}) or a label event "
                               f"with 'kind' ({', '.join(EVENT_KINDS)})")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 <= value <= 1):
            raise InvalidInput(f"LABELS line {line}: field '{name}' must be a fraction in "
                               f"[0, 1] or null, got {value!r}")
        out[name] = None if value is None else float(value)
    return out


def _apply(state: SampleLabels, event: Mapping[str, Any], line: int) -> None:
    kind = event["kind"]
    if kind == "skip":
        reason = event.get("reason")
        state.skip = None if reason is None else (str(reason).strip() or "no reason given")
        return
    if event.get("looked"):
        state.looked = True
    if kind == "claim":
        i = _index(event.get("claim"), "claim", line)
        label = event.get("label")
        if label is None:
            state.claims.pop(i, None)
        elif label in _LABELS:
            state.claims[i] = (label, _indices(event.get("chunks", []), line))
        else:
            raise InvalidInput(f"LABELS line {line}: field 'label' must be one of "
                               f"{', '.join(_LABELS)} or null, got {label!r}")
    elif kind == "chunk":
        j = _index(event.get("chunk"), "chunk", line)
        rel = _flag(event.get("relevant"), "relevant", line)
        if rel is None:
            state.chunks.pop(j, None)
        else:
            state.chunks[j] = rel
    elif kind == "reference":
        i = _index(event.get("claim"), "claim", line)
        inr = _flag(event.get("in_response"), "in_response", line)
        if inr is None:
            state.reference.pop(i, None)
        else:
            state.reference[i] = (inr, _indices(event.get("chunks", []), line))


def fold(events: Sequence[Mapping[str, Any]], bad_lines: Sequence[int] = ()) -> Labels:
    """The labels the events leave, latest first for each field."""
    out = Labels(bad_lines=list(bad_lines))
    for event in events:
        line = int(event.get("_line", 0))
        kind = event.get("kind")
        if kind == "session":
            out.session = {k: v for k, v in event.items() if k not in ("_line", "kind")}
            continue
        rid = event.get("id")
        if not isinstance(rid, str) or not rid:
            raise InvalidInput(f"LABELS line {line}: field 'id' is missing; every row names "
                               "the sample it labels")
        if kind is None:
            out.values.setdefault(rid, {}).update(_value_row(event, line))
            continue
        if kind in ("verdict", "edit", "role"):
            raise InvalidInput(f"LABELS line {line}: a golden-set review event (kind "
                               f"{kind!r}), not a label of a results sample; it belongs to "
                               "`noisegauge testset export GOLDEN --labels EVENTS`")
        if kind not in EVENT_KINDS:
            raise InvalidInput(f"LABELS line {line}: unknown kind {kind!r}; use one of "
                               f"{', '.join(EVENT_KINDS)}")
        digest = event.get("digest")
        if not isinstance(digest, str):
            raise InvalidInput(f"LABELS line {line}: field 'digest' is missing; a label names "
                               "the claims and chunks it was made on")
        state = out.samples.setdefault(rid, {}).setdefault(digest, SampleLabels(rid, digest))
        _apply(state, event, line)
    return out


def read_labels(path: str | os.PathLike[str]) -> Labels:
    """LABELS folded; a missing file is refused (it holds no labels to estimate from)."""
    file = LabelFile(path)
    if not file.path.exists():
        raise InvalidInput(f"{path}: no such labels file (make one with `noisegauge review`)")
    events, bad = file.read()
    return fold(events, bad)
