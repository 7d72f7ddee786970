"""Golden items (question, reference, relevant chunks, no response) and the files they come from.

A golden row uses the same field names ``noisegauge score`` reads (``user_input``, ``reference``,
``retrieved_contexts`` holding the *relevant* chunks, and their aliases); ``response`` is absent.
A row written by ``noisegauge testset`` also carries its own traps, ``distractors``
(``[{"id", "text", "kind", "differs"}]``, ``kind`` one of ``TRAP_KINDS``), which
``--strategy siblings`` injects; other extra keys (``draft``...) are kept as metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, InvalidSample
from ..io.readers import open_source
from ..samples import FIELD_ALIASES, Sample, Turn
from ..testset.rows import DISTRACTOR_KINDS

__all__ = ["GoldenItem", "Trap", "TRAP_KINDS", "NO_ANSWER", "load_golden", "read_golden", "load_records", "load_pool",
           "PoolChunk"]

#: The kinds of a golden row's own distractors, in the order ``siblings`` injects them: the
#: look-alike (same template, another entity or value) is the trap a reader falls for most.
TRAP_KINDS: tuple[str, ...] = DISTRACTOR_KINDS
#: The ``status`` of a GOLDEN row for which ``testset`` found no answer (no reference yet).
NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Trap:
    """One of a golden row's own distractors: a chunk that looks like the answer and is not."""

    text: str
    kind: str
    id: str | None = None
    #: The detail that differs from the answer, e.g. "30 days vs 90 days".
    differs: str | None = None


def _traps(value: Any, row: int) -> tuple[Trap, ...]:
    """The row's ``distractors``, checked: a list of objects with a text and a known kind."""
    expected = ('a list of {"id", "text", "kind", "differs"} objects, kind one of '
                + ", ".join(TRAP_KINDS))
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field="distractors",
                            expected=expected)
    traps = []
    for j, d in enumerate(value):
        where = f"distractors[{j}]"
        if not isinstance(d, Mapping):
            raise InvalidSample(f"has type {type(d).__name__}", row=row, field=where,
                                expected=expected)
        text, kind, tid, differs = d.get("text"), d.get("kind"), d.get("id"), d.get("differs")
        if not isinstance(text, str) or not text.strip():
            raise InvalidSample("has no text", row=row, field=f"{where}.text",
                                expected="a non-empty string")
        if kind not in TRAP_KINDS:
            raise InvalidSample(f"is {kind!r}", row=row, field=f"{where}.kind",
                                expected="one of " + ", ".join(TRAP_KINDS))
        if tid is not None and not isinstance(tid, (str, int)):
            raise InvalidSample(f"has type {type(tid).__name__}", row=row, field=f"{where}.id",
                                expected="a string")
        if differs is not None and not isinstance(differs, str):
            raise InvalidSample(f"has type {type(differs).__name__}", row=row,
                                field=f"{where}.differs", expected="a string")
        traps.append(Trap(text, kind, None if tid is None else str(tid), differs))
    return tuple(traps)


@dataclass(frozen=True)
class GoldenItem:
    """One question of a golden set: what to ask, what a right answer says, what answers it."""

    id: str
    question: str
    reference: str
    relevant: tuple[str, ...]
    chunk_ids: tuple[str | None, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: The row's own traps (``distractors``), in file order; empty when it has none.
    distractors: tuple[Trap, ...] = ()
    #: The conversation before ``question`` (a chat's golden row), oldest first; it goes to
    #: the pipeline (when it takes ``history``) and with every noisy sample.
    history: tuple[Turn, ...] = ()

    @classmethod
    def from_record(cls, record: Mapping[str, Any], row: int) -> GoldenItem:
        """Read a golden row with any accepted field names; ``response`` may be absent.

        >>> GoldenItem.from_record({"question": "q", "reference": "r", "contexts": ["c"]}, 0).id
        'q0'
        """
        if not isinstance(record, Mapping):
            raise InvalidSample(f"a record must be an object, got {type(record).__name__}", row=row)
        traps = _traps(record.get("distractors"), row)
        record = {k: v for k, v in record.items() if k != "distractors"}  # not metadata too
        if not any(record.get(name) is not None for name in FIELD_ALIASES["response"]):
            record = {**record, "response": ""}  # golden rows have no answer yet
        s = Sample.from_record(record, row=row)
        assert s.reference is not None  # from_record refuses a row without one
        if not s.retrieved_contexts:
            raise InvalidSample("is empty", row=row, field="retrieved_contexts",
                                expected="at least one relevant chunk per golden question")
        return cls(id=s.id if s.id is not None else f"q{row}", question=s.user_input,
                   reference=s.reference, relevant=s.retrieved_contexts, chunk_ids=s.chunk_ids,
                   metadata=dict(s.metadata), distractors=traps, history=s.history)


def load_records(path: str | Path, *, strings: bool = False) -> list[Any]:
    """Rows of any file ``noisegauge score`` reads (JSONL, JSON, RAGChecker JSON, CSV, Parquet).

    A golden set or pool is small and must be sound, so the first bad row stops the load;
    with ``strings`` a row that is a bare string (a pool chunk) is kept as it is.
    """
    rows: list[Any] = []
    for raw in open_source(Path(path)):
        if strings and isinstance(raw.value, str):
            rows.append(raw.value)
        elif raw.error is not None or raw.record is None:
            raise InvalidInput(f"{path}: {raw.error or f'row {raw.index} is not a record'}")
        else:
            rows.append(dict(raw.record))
    return rows


def read_golden(source: str | Path | Iterable[GoldenItem | Mapping[str, Any]]
                ) -> tuple[list[GoldenItem], list[str]]:
    """Golden items, and the ids of the rows left out for having no answer yet.

    ``noisegauge testset`` writes a question nothing in the corpus answers as a row with
    ``status: "no_answer"`` and no reference: it cannot be stressed until a person writes one,
    so it is skipped here and named, never read as a broken row. Ids must be unique.
    """
    records: Iterable[Any] = load_records(source) if isinstance(source, (str, Path)) else source
    items: list[GoldenItem] = []
    skipped: list[str] = []
    for i, r in enumerate(records):
        if isinstance(r, Mapping) and r.get("status") == NO_ANSWER:
            skipped.append(str(r.get("id", f"q{i}")))
        else:
            items.append(r if isinstance(r, GoldenItem) else GoldenItem.from_record(r, row=i))
    if not items:
        if skipped:
            raise InvalidInput(f"every row of the golden set has status {NO_ANSWER!r} "
                               f"({len(skipped)}): write their references in `noisegauge "
                               "review GOLDEN` first")
        raise InvalidInput("the golden set is empty")
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if item.id in seen:
            raise InvalidSample(f"duplicate id {item.id!r} (also row {seen[item.id]})", row=i,
                                field="id", expected="a unique id per golden question")
        seen[item.id] = i
    return items, skipped


def load_golden(source: str | Path | Iterable[GoldenItem | Mapping[str, Any]]) -> list[GoldenItem]:
    """Golden items from a path or from records/items (``read_golden`` without the skipped)."""
    return read_golden(source)[0]


@dataclass(frozen=True)
class PoolChunk:
    """A distractor candidate from a user-given pool."""

    text: str
    id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


def load_pool(source: str | Path | Sequence[str | PoolChunk | Mapping[str, Any]]) -> list[PoolChunk]:
    """Distractor chunks from a ``.txt`` file (one per line), JSONL/JSON/CSV rows (strings, or
    objects with ``text``, ``content`` or ``page_content``), or a list of the same."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.suffix.lower() == ".txt" and p.is_file():
            return [PoolChunk(line.strip()) for line in p.read_text(encoding="utf-8").splitlines()
                    if line.strip()]
        rows: Sequence[Any] = load_records(p, strings=True)
    else:
        rows = source
    out: list[PoolChunk] = []
    for i, row in enumerate(rows):
        if isinstance(row, PoolChunk):
            out.append(row)
        elif isinstance(row, str):
            out.append(PoolChunk(row))
        elif isinstance(row, Mapping):
            text = next((row[k] for k in ("text", "content", "page_content") if k in row), None)
            if not isinstance(text, str) or not text.strip():
                raise InvalidSample("has no text", row=i, field="text",
                                    expected="a non-empty string under text, content or page_content")
            meta = row.get("metadata")
            raw_id = row.get("id", row.get("doc_id"))
            out.append(PoolChunk(text, None if raw_id is None else str(raw_id),
                                 dict(meta) if isinstance(meta, Mapping) else {}))
        else:
            raise InvalidSample(f"has type {type(row).__name__}", row=i, field="text",
                                expected="a string or an object with a text field")
    if not out:
        raise InvalidInput("the distractor pool is empty")
    return out
