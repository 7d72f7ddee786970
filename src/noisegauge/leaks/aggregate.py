"""Per-source leak counts over a whole run, streamed one result row at a time.

A *leaked claim* is a wrong response claim that a retrieved chunk carried into the answer:
relevant or irrelevant noise (the chunks in its ``leaked_from``) or a misattributed detail
(``misattributed_from``). A claim leaked by two sources counts once for each of them, and
once in the run's total, so the shares of the sources can add up to more than 100%.

Memory grows with the number of distinct sources and of retrievals (a few bytes each), never
with the size of the rows: a row's texts and claims are dropped as soon as it is counted.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..io.results import history_turns
from .claims import LEAK_KINDS, leak_kind
from .identity import DIGEST_PREFIX, chunk_sources
from .topk import TopK, TopKRow

__all__ = ["EXAMPLES", "LEAK_KINDS", "Agreement", "Example", "Leaks", "LeakTally", "SourceLeaks",
           "agreement_slot", "tally"]

#: Example claims kept per source.
EXAMPLES = 3
#: Characters of a chunk's text kept to show a source named by a digest.
SNIPPET = 120


@dataclass(frozen=True)
class Example:
    """A leaked claim: its text, kind, and the sample it is in (position in the results file)."""

    text: str
    kind: str
    position: int
    sample: str | int
    #: For a claim of a conversation: the last turns before it and the question
    #: (``conversation_line``), which give the claim its meaning; None for a single turn.
    context: str | None = None


@dataclass(slots=True)
class _Source:
    """What is kept per source while streaming: counts, sample positions, a few examples
    (slots, and the kinds as a short list: a run can have hundreds of thousands of these)."""

    name: str
    snippet: str | None
    retrieved: int = 0
    irrelevant: int = 0
    kinds: list[int] = field(default_factory=lambda: [0] * len(LEAK_KINDS))
    positions: array[int] = field(default_factory=lambda: array("l"))
    examples: list[Example] | None = None


@dataclass(frozen=True)
class SourceLeaks:
    """One source's line of the leak table."""

    source: str
    leaked_claims: int
    kinds: Mapping[str, int]
    share: float | None  # of all leaked claims; None when the run has none
    samples: tuple[str | int, ...]  # the samples that retrieved it, in file order
    positions: tuple[int, ...]  # the same samples as positions in the results file
    retrieved: int
    irrelevant: int
    confused_with: str | None
    examples: tuple[Example, ...]
    snippet: str | None

    def to_json(self) -> dict[str, Any]:
        """The CONTRACTS shape (``leaks --json``)."""
        return {"source": self.source, "leaked_claims": self.leaked_claims,
                "samples": list(self.samples), "retrieved": self.retrieved,
                "irrelevant": self.irrelevant, "confused_with": self.confused_with}


@dataclass(frozen=True)
class Agreement:
    """Labels against the judge's reading, chunk by chunk (``--relevance both``)."""

    both: int
    labels_only: int
    judge_only: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.labels_only + self.judge_only + self.neither

    @property
    def share(self) -> float | None:
        return (self.both + self.neither) / self.n if self.n else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa; None when chance agreement is total (one class only)."""
        n = self.n
        if not n:
            return None
        p_label = (self.both + self.labels_only) / n
        p_judge = (self.both + self.judge_only) / n
        chance = p_label * p_judge + (1 - p_label) * (1 - p_judge)
        share = self.share
        if share is None or chance >= 1:
            return None
        return (share - chance) / (1 - chance)

    def to_json(self) -> dict[str, Any]:
        return {"chunks": self.n, "both_relevant": self.both, "labels_only": self.labels_only,
                "judge_only": self.judge_only, "neither": self.neither, "agreement": self.share,
                "kappa": self.kappa}


@dataclass(frozen=True)
class Leaks:
    """The whole run's leak table, ranked by leaked claims, then source."""

    sources: tuple[SourceLeaks, ...]
    total_sources: int
    leaked_claims: int  # distinct leaked claims in the run
    cumulative: tuple[int, ...]  # cumulative[i]: distinct leaked claims the first i+1 sources carry
    leaking: int  # sources that leaked at least one claim
    rows: int
    errors: int
    unsourced: int  # rows with chunks but neither ids nor texts to name them
    relevance_from: Mapping[str, int]  # chunks by where their relevance came from
    agreement: Agreement | None
    topk: tuple[TopKRow, ...]

    def carried(self, n: int) -> float | None:
        """Share of the run's leaked claims the first ``n`` sources carry (None: no leaks)."""
        if not self.leaked_claims or n <= 0 or not self.cumulative:
            return None
        return self.cumulative[min(n, len(self.cumulative)) - 1] / self.leaked_claims

    def headline_count(self, n: int = 5) -> int:
        """How many sources the cumulative line names: ``n``, or fewer when fewer leaked."""
        return min(n, self.leaking, len(self.cumulative))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sources": [s.to_json() for s in self.sources]}
        if self.agreement is not None:
            out["agreement"] = self.agreement.to_json()
        return out


def _row_sources(row: Mapping[str, Any], n: int) -> tuple[str, ...] | None:
    """The row's chunk sources: as written by the scorer, else from the input's ids and
    texts (results from before rows carried them); None when neither is there."""
    chunks = row.get("chunks") or []
    given = [c.get("source") if isinstance(c, Mapping) else None for c in chunks]
    if len(given) == n and all(isinstance(s, str) for s in given):
        return tuple(str(s) for s in given)
    inp = row.get("input")
    texts = inp.get("retrieved_contexts") if isinstance(inp, Mapping) else None
    if not isinstance(texts, list) or len(texts) != n:
        return None
    ids = inp.get("chunk_ids") if isinstance(inp, Mapping) else None
    return chunk_sources([str(t) for t in texts], ids if isinstance(ids, list) else None)


#: Earlier turns shown with a leaked claim of a conversation, and characters per turn.
CONTEXT_TURNS = 2
CONTEXT_CHARS = 80


def conversation_line(inp: Any) -> str | None:
    """The last turns before the question and the question, one line (``user: ... ·
    assistant: ... · question: ...``); None when the row is a single turn."""
    if not isinstance(inp, Mapping):
        return None
    turns = history_turns(inp)
    if not turns:
        return None

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= CONTEXT_CHARS else text[:CONTEXT_CHARS - 1] + "…"

    shown = [f"{role}: {cut(text)}" for role, text in turns[-CONTEXT_TURNS:]]
    more = len(turns) - len(shown)
    return ("… " if more else "") + " · ".join(
        [*shown, f"question: {cut(str(inp.get('user_input') or ''))}"])


def agreement_slot(chunk: Mapping[str, Any]) -> int | None:
    """Where a chunk entry counts in ``Agreement`` (both, labels only, judge only, neither);
    None unless labels decided it and the judge's reading was kept (``--relevance both``)."""
    judged = chunk.get("relevant_by_judge")
    if chunk.get("relevance_from") != "labels" or not isinstance(judged, bool):
        return None
    label = bool(chunk.get("relevant"))
    return 0 if label and judged else 1 if label else 2 if judged else 3


class LeakTally:
    """Feed result rows in file order (``add``); ``leaks()`` ranks what was seen."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._sources: list[_Source] = []
        self._pairs: dict[tuple[int, int], int] = {}
        # Per distinct leaked claim, its sources: one int when a single source (the usual
        # case, kept compact), else a tuple.
        self._single = array("q")
        self._multi: list[tuple[int, ...]] = []
        self.rows = self.errors = self.unsourced = 0
        self._origin: dict[str, int] = {}
        self._agree = [0, 0, 0, 0]  # both, labels only, judge only, neither
        self.topk = TopK()
        self._names: list[str | int] = []  # each row's id (its index when it has none)
        self._ranked: tuple[int, tuple[list[int], list[int], list[int], dict[int, int]]] | None = None

    def _intern(self, name: str, snippet: str | None) -> int:
        k = self._index.get(name)
        if k is None:
            k = self._index[name] = len(self._sources)
            self._sources.append(_Source(name, snippet))
        return k

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one result row (rows come in file order: a row's position is its number)."""
        pos = self.rows
        self.rows += 1
        sample: str | int = str(row["id"]) if row.get("id") is not None else int(
            row.get("index", pos))
        self._names.append(sample)
        if row.get("status") == "error":
            self.errors += 1
            return
        self.topk.add(row)
        chunks = [c for c in row.get("chunks") or [] if isinstance(c, Mapping)]
        if not chunks:
            return
        names = _row_sources(row, len(chunks))
        if names is None:
            self.unsourced += 1
            return
        inp = row.get("input")
        texts = inp.get("retrieved_contexts") if isinstance(inp, Mapping) else None
        keys: list[int] = []
        relevant: set[int] = set()
        for j, c in enumerate(chunks):
            snippet = None
            if isinstance(texts, list) and j < len(texts) and names[j].startswith(DIGEST_PREFIX):
                snippet = str(texts[j])[:SNIPPET]
            k = self._intern(names[j], snippet)
            keys.append(k)
            src = self._sources[k]
            src.retrieved += 1
            if c.get("relevant"):
                relevant.add(k)
            else:
                src.irrelevant += 1
            if not src.positions or src.positions[-1] != pos:  # once per sample
                src.positions.append(pos)
            self._count_origin(c)
        leaking: set[int] = set()
        for claim in row.get("response_claims") or []:
            if not isinstance(claim, Mapping):
                continue
            kind, idx = leak_kind(claim)
            found = tuple(dict.fromkeys(keys[j] for j in idx if 0 <= j < len(keys)))
            if kind is None or not found:
                continue
            if len(found) == 1:
                self._single.append(found[0])
            else:
                self._multi.append(found)
            slot = LEAK_KINDS.index(kind)
            for k in found:
                src = self._sources[k]
                src.kinds[slot] += 1
                if src.examples is None:
                    src.examples = []
                if len(src.examples) < EXAMPLES:
                    src.examples.append(Example(str(claim.get("text", "")), kind, pos, sample,
                                                conversation_line(inp)))
            leaking.update(found)
        for a in leaking:  # a leaking source and each relevant source it came with
            for b in relevant - {a}:
                key = (a, b) if a < b else (b, a)
                self._pairs[key] = self._pairs.get(key, 0) + 1

    def _count_origin(self, chunk: Mapping[str, Any]) -> None:
        origin = chunk.get("relevance_from")
        if isinstance(origin, str):
            self._origin[origin] = self._origin.get(origin, 0) + 1
        slot = agreement_slot(chunk)
        if slot is not None:
            self._agree[slot] += 1

    def _siblings(self) -> dict[int, int]:
        """Each source's most frequent partner; none where two partners tie for it (a tie
        names no sibling, and picking one by name would pretend it did)."""
        best: dict[int, tuple[int, int, bool]] = {}  # count, partner, tied
        for (a, b), count in self._pairs.items():
            for x, y in ((a, b), (b, a)):
                old = best.get(x)
                if old is None or count > old[0]:
                    best[x] = (count, y, False)
                elif count == old[0]:
                    best[x] = (count, old[1], True)
        return {x: y for x, (_, y, tied) in best.items() if not tied}

    def _ranking(self) -> tuple[list[int], list[int], list[int], dict[int, int]]:
        """Sources in rank order, their leaked claims, the leaked claims first carried at
        each rank, and the siblings; computed once after the last ``add``."""
        if self._ranked is None or self._ranked[0] != self.rows:
            srcs = self._sources
            leaked = [sum(s.kinds) for s in srcs]
            order = sorted(range(len(srcs)), key=lambda k: (-leaked[k], srcs[k].name))
            rank = {k: r for r, k in enumerate(order)}
            # Each leaked claim counts for the best-ranked source that carries it.
            first = [0] * (len(order) + 1)
            for k in self._single:
                first[rank[k]] += 1
            for ks in self._multi:
                first[min(rank[k] for k in ks)] += 1
            self._ranked = (self.rows, (order, leaked, first, self._siblings()))
        return self._ranked[1]

    def json_sources(self, top: int | None = None) -> Iterator[dict[str, Any]]:
        """``SourceLeaks.to_json`` of the first ``top`` sources (all: None), one at a time,
        so writing every source of a huge run never holds them all."""
        order, leaked, _, siblings = self._ranking()
        srcs = self._sources
        for k in order if top is None else order[:top]:
            s = srcs[k]
            yield {"source": s.name, "leaked_claims": leaked[k],
                   "samples": self._sample_ids(s.positions), "retrieved": s.retrieved,
                   "irrelevant": s.irrelevant,
                   "confused_with": srcs[siblings[k]].name if k in siblings else None}

    def leaks(self, top: int | None = None) -> Leaks:
        """The ranked table; ``top``: only the first ``top`` sources."""
        srcs = self._sources
        order, leaked, first, siblings = self._ranking()
        total = len(self._single) + len(self._multi)
        shown = order if top is None else order[:top]
        cumulative: list[int] = []
        running = 0
        for r in range(len(shown)):
            running += first[r]
            cumulative.append(running)
        out = tuple(
            SourceLeaks(source=srcs[k].name, leaked_claims=leaked[k],
                        kinds=dict(zip(LEAK_KINDS, srcs[k].kinds, strict=True)),
                        share=leaked[k] / total if total else None,
                        samples=tuple(self._sample_ids(srcs[k].positions)),
                        positions=tuple(srcs[k].positions), retrieved=srcs[k].retrieved,
                        irrelevant=srcs[k].irrelevant,
                        confused_with=srcs[siblings[k]].name if k in siblings else None,
                        examples=tuple(srcs[k].examples or ()), snippet=srcs[k].snippet)
            for k in shown)
        agree = Agreement(*self._agree) if any(self._agree) else None
        return Leaks(out, len(srcs), total, tuple(cumulative), sum(1 for x in leaked if x),
                     self.rows, self.errors,
                     self.unsourced, dict(sorted(self._origin.items())), agree,
                     self.topk.table())

    def _sample_ids(self, positions: Sequence[int]) -> list[str | int]:
        return [self._names[p] for p in positions]


def tally(rows: Iterable[Mapping[str, Any]], top: int | None = None) -> Leaks:
    """The leak table of ``rows`` (result rows in file order)."""
    t = LeakTally()
    for row in rows:
        t.add(row)
    return t.leaks(top)
