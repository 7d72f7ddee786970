"""From questions (given, from a log, or written from the corpus) to GOLDEN rows.

For each question: rank the candidate chunks (``draft.rank_chunks``), take the best as the
chunk that holds the answer, draft the reference from it (and from the question's second
hop: a close runner-up bridged to it by a rare name), then gather its traps: the
corpus's look-alikes of that chunk (``lookalike``), and same-topic chunks that do not hold
the answer. The judge checks every trap against the reference; a trap that holds the answer
is no trap (it joins the relevant chunks when it ranks as well, else it is left out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judges.base import Judge
from ..samples import Turn
from ..textkit.sentences import sentences
from ..textkit.tokens import tokenize
from ..verdicts import Verdict
from .corpus import Chunk
from .draft import (
    BRIDGE_IDF,
    NO_ANSWER_ASKED,
    NO_ANSWER_BELOW,
    WEAK_ANSWER,
    Ranked,
    answer_kind,
    asked_share,
    confidence,
    draft_reference,
    rank_chunks,
)
from .lookalike import LookAlike, LookAlikes, question_side
from .retrieve import Index, terms
from .rows import Distractor, Draft, GoldenRow, sort_distractors

__all__ = ["Question", "Builder", "MAX_LOOKALIKES", "MAX_TOPICAL"]

#: Traps kept per row, by kind.
MAX_LOOKALIKES = 3
MAX_TOPICAL = 2
#: The runner-up (ranking within this share of the best, bridged to it) may be the
#: question's second hop: it joins the relevant chunks and the reference.
HOP_CLOSE = 0.3
#: A chunk that holds the answer and ranks this close to the best is relevant too.
ALSO_RELEVANT = 0.8

#: A same-topic chunk scoring this share of the best, with another number, conflicts.
CONFLICT_CLOSE = 0.85

#: A topical chunk scoring this share of the answer chunk is no trap: it may hold the answer.
UNSURE_TOPICAL = 0.75

#: User turns before a chat's question read with it (as the misattribution hints read them).
LAST_USER_TURNS = 2

#: ``(question, chunks) -> reference``: a generator that writes the reference.
Writer = Callable[[str, Sequence[str]], Awaitable[str]]


@dataclass(frozen=True)
class Question:
    """A question to build a row for; from a log, the chunks its system retrieved."""

    id: str
    text: str
    origin: str  # given | log | template | a generator's spec
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: From a log: indices (into the builder's chunks) of the chunks retrieved for it.
    log_chunks: tuple[int, ...] | None = None
    response: str | None = None
    #: From a chat: the turns before the question, oldest first (they go into the row).
    history: tuple[Turn, ...] = ()

    @property
    def earlier(self) -> str:
        """The last user turns before the question (``LAST_USER_TURNS``), oldest first:
        what an elliptical question ("And for monthly plans?") is about; "" for one turn."""
        return " ".join([t.content for t in self.history if t.role == "user"][-LAST_USER_TURNS:])

    @property
    def asked(self) -> str:
        """The question made clearer by the last user turns; the question alone in one turn."""
        return f"{self.earlier} {self.text}" if self.history and self.earlier else self.text


class Builder:
    """Builds GOLDEN rows over one corpus with one judge (and, optionally, a writer)."""

    def __init__(self, chunks: Sequence[Chunk], judge: Judge, judge_spec: str, *,
                 writer: Writer | None = None, writer_spec: str | None = None) -> None:
        self.index = Index(chunks)
        self.chunks = self.index.chunks
        self.lookalikes = LookAlikes(self.index)
        self.judge = judge
        self.judge_spec = judge_spec
        self.writer = writer
        self.writer_spec = writer_spec

    async def rows(self, questions: Sequence[Question], concurrency: int = 8) -> list[GoldenRow]:
        """One row per question, in order."""
        gate = asyncio.Semaphore(concurrency)

        async def one(q: Question) -> GoldenRow:
            async with gate:
                return await self.row(q)

        return list(await asyncio.gather(*(one(q) for q in questions)))

    async def row(self, q: Question) -> GoldenRow:
        # in a chat, the question with the last user turns: "And for monthly plans?" alone
        # names no refund; the question's own words still weigh most (``draft.EARLIER_TURNS``)
        ranked = rank_chunks(self.index, q.text, q.log_chunks, q.earlier)
        q_terms = terms(q.asked)
        meta: dict[str, Any] = {**q.metadata}
        if q.log_chunks is not None:
            meta["response"] = q.response
            meta["log_context_ids"] = [self.chunks[i].id for i in q.log_chunks]
        if not ranked or ranked[0].score < NO_ANSWER_BELOW or (
                ranked[0].score < WEAK_ANSWER
                and asked_share(self.index, q.asked, ranked[0]) < NO_ANSWER_ASKED):
            return await self._no_answer(q, ranked, meta)
        best = self._settle_side(q, ranked)
        reference = draft_reference(best, self.chunks[best.index].text, q.asked)
        # the second hop is of the question's own terms: in a chat, the entity of an earlier
        # turn ("Pro" before "And on the Team plan?") is what the question moved away from
        hop = self._hop(terms(q.text), ranked, best)
        if hop is not None:
            reference = f"{reference} {draft_reference(hop, self.chunks[hop.index].text, q.asked)}"
        method, reasons = "extractive", []
        if self.writer is not None:
            used = [best] + ([hop] if hop is not None else [])
            method, reference, why = await self._written(q, used, reference)
            reasons += [why] if why else []
        relevant, distractors, conflicts = await self._traps(q, q_terms, ranked, best, reference,
                                                             hop)
        conf = confidence(ranked)
        status: Any = "drafted"
        conflict_ids = tuple(self.chunks[i].id for i in sorted(conflicts))
        if conflict_ids:
            status = "conflict"
            said = "; ".join(f"{d.id} ({d.differs})" for d in distractors if d.kind == "conflicting")
            reasons.append(f"other chunks state another value for the same thing: {said}; "
                           "settle which is right")
            conf *= 0.5
        return GoldenRow(
            q.id, q.text, reference, tuple(self.chunks[i].text for i in relevant),
            tuple(self.chunks[i].id for i in relevant), sort_distractors(distractors),
            Draft(method, q.origin, conf, self.judge_spec), status,
            "; ".join(reasons) or None, conflict_ids, meta, q.history)

    async def _traps(self, q: Question, q_terms: Sequence[str], ranked: Sequence[Ranked],
                     best: Ranked, reference: str, hop: Ranked | None = None
                     ) -> tuple[list[int], list[Distractor], set[int]]:
        """(relevant chunks, traps, chunks in conflict) of a drafted row: the answer chunk's
        look-alikes, then the candidates near the question, each checked by the judge."""
        relevant = [best.index] + ([hop.index] if hop is not None else [])
        traps, conflicts = self._lookalike_traps(best.index, q)
        traps = [t for t in traps if t[0] not in relevant]
        conflicts -= set(relevant)
        taken = {*relevant, *(d[0] for d in traps)}
        topical = [r.index for r in ranked[1:] if r.index not in taken]
        if q.log_chunks is not None:  # beyond the log's own chunks, the corpus's neighbours
            topical += [i for i, _ in self.index.search(q_terms, 10)
                        if i not in taken and i not in topical]
        topical = topical[:MAX_TOPICAL + 4]
        holds = await self._holds_answer(reference, q.asked, [i for i, _, _ in traps] + topical)
        score = {r.index: r.score for r in ranked}
        raw = {r.index: r.raw for r in ranked}
        # a chunk in conflict answers the same question: it holds what the answer chunk
        # holds of the question ("monthly", "Pro"), and states another value
        asked = set(q_terms) & self.index.term_sets[best.index]
        keys = answer_keys(reference, q.asked)
        out: list[Distractor] = []
        for i, kind, differs in traps:
            if i in holds:
                conflicts.discard(i)
            else:
                out.append(Distractor(self.chunks[i].id, self.chunks[i].text, kind, differs))
        n_topical = 0
        for i in topical:
            text = self.chunks[i].text
            if i in holds:
                if score.get(i, 0.0) >= ALSO_RELEVANT * best.score:
                    relevant.append(i)
            elif (raw.get(i, 0.0) >= CONFLICT_CLOSE * best.raw
                  and asked <= self.index.term_sets[i] and _other_value(text, keys)):
                out.append(Distractor(self.chunks[i].id, text, "conflicting",
                                      _values_differ(reference, text, keys)))
                conflicts.add(i)
            elif raw.get(i, 0.0) >= UNSURE_TOPICAL * best.raw or self._second_hop(q_terms, best, i):
                continue  # answers about as well as the answer chunk: may be the answer
            elif n_topical < MAX_TOPICAL:
                out.append(Distractor(self.chunks[i].id, text, "topical"))
                n_topical += 1
        if not out:  # nothing near the question: the answer chunk's own neighbours
            near = [i for i, _ in self.index.search(self.index.doc_terms[best.index], 8)
                    if i not in relevant]
            held = await self._holds_answer(reference, q.asked, near)
            out += [Distractor(self.chunks[i].id, self.chunks[i].text, "topical")
                    for i in near if i not in held][:MAX_TOPICAL]
        return relevant, out, conflicts

    def _hop(self, q_terms: Sequence[str], ranked: Sequence[Ranked], best: Ranked
             ) -> Ranked | None:
        """The question's second hop: a close runner-up bridged to the answer chunk that
        holds question terms the answer chunk does not."""
        q = set(q_terms)
        missing = q - self.index.term_sets[best.index]
        for r in ranked[:2]:
            if (r.index != best.index and r.score >= HOP_CLOSE * best.score
                    and missing & self.index.term_sets[r.index]
                    and self._second_hop(q_terms, best, r.index)):
                return r
        return None

    def _second_hop(self, q_terms: Sequence[str], best: Ranked, i: int) -> bool:
        """Chunk ``i`` goes on about a rare name of the answer chunk that the question does
        not hold (a bridge): it may be the question's second hop, and hold the answer."""
        shared = (self.index.term_sets[i] & self.index.term_sets[best.index]) - set(q_terms)
        return any(self.index.idf(t) >= BRIDGE_IDF * self.index.oov_idf for t in shared)

    def _settle_side(self, q: Question, ranked: list[Ranked]) -> Ranked:
        """The best chunk, unless the question names the other side of one of its
        look-alikes ("Team" where the best chunk says "Pro"; in a chat, or the last user
        turn that names a side does): then that look-alike."""
        best = ranked[0]
        if q.log_chunks is not None:
            return best
        for la in self.lookalikes.of(best.index):
            if _side(q, la) == "theirs":
                other = rank_chunks(self.index, q.text, [la.other], q.earlier)
                if other:
                    return other[0]
        return best

    def _lookalike_traps(self, i: int, q: Question
                         ) -> tuple[list[tuple[int, Any, str]], set[int]]:
        traps: list[tuple[int, Any, str]] = []
        conflicts: set[int] = set()
        for la in self.lookalikes.of(i)[:MAX_LOOKALIKES]:
            side = _side(q, la)
            if side in ("neither", "both") and _states_value(la):
                traps.append((la.other, "conflicting", la.differs))
                conflicts.add(la.other)
            else:
                traps.append((la.other, "look-alike", la.differs))
        return traps, conflicts

    async def _holds_answer(self, reference: str, question: str,
                            candidates: Sequence[int]) -> set[int]:
        """The candidates that hold the answer: the judge finds the reference entailed by
        them, or they hold every word the reference adds to the question, or half of the
        reference's answer-like words (numbers, names) the question does not hold."""
        claims = sentences(reference) or [reference]
        q_terms = set(terms(question))
        answer = set(terms(reference)) - q_terms
        keys = answer_keys(reference, question)
        verdicts = await asyncio.gather(*(self.judge.check(self.chunks[i].text, claims)
                                          for i in candidates))
        out = set()
        for i, vs in zip(candidates, verdicts, strict=True):
            entailed = bool(vs) and all(v == Verdict.ENTAILED for v in vs)
            has = self.index.term_sets[i]
            has_words = bool(answer) and answer <= has
            has_keys = bool(keys) and len(keys & has) >= max(1, len(keys) / 2)
            if entailed or has_words or has_keys:
                out.add(i)
        return out

    async def _written(self, q: Question, used: Sequence[Ranked], extractive: str
                       ) -> tuple[str, str, str | None]:
        """The writer's reference when the judge finds every claim of it entailed by the
        chunks it was drafted from; else the extractive draft, with the reason."""
        if self.writer is None:
            return "extractive", extractive, None
        spec = self.writer_spec or "generator"
        texts = [self.chunks[r.index].text for r in used]
        text = (await self.writer(q.asked, texts)).strip()
        if text:
            claims = await self.judge.extract(text, q.asked)
            verdicts = await self.judge.check(" ".join(texts), claims) if claims else []
            if claims and all(v == Verdict.ENTAILED for v in verdicts):
                return spec, text, None
        return "extractive", extractive, (f"the reference {spec} wrote is not entailed by the "
                                          "chunk; the extractive draft is kept")

    async def _no_answer(self, q: Question, ranked: Sequence[Ranked],
                         meta: dict[str, Any]) -> GoldenRow:
        near = [r.index for r in ranked[:MAX_TOPICAL]]
        best = f" (closest: {self.chunks[ranked[0].index].id})" if ranked else ""
        return GoldenRow(
            q.id, q.text, None, (), (),
            tuple(Distractor(self.chunks[i].id, self.chunks[i].text, "topical") for i in near),
            Draft("extractive", q.origin, 0.0, self.judge_spec), "no_answer",
            f"no answer found in the corpus{best}; write the reference in review, or drop "
            "the row", (), meta, q.history)


def _side(q: Question, la: LookAlike) -> str:
    """Which side of a look-alike pair the question names (``lookalike.question_side``); in
    a chat, a question that names none ("Does it include phone support?") names the side the
    latest user turn naming one did, so "annual" then "And for monthly plans?" is monthly's."""
    side = question_side(terms(q.text), la)
    if side != "neither":
        return side
    for turn in reversed([t.content for t in q.history if t.role == "user"][-LAST_USER_TURNS:]):
        earlier = question_side(terms(turn), la)
        if earlier != "neither":
            return earlier
    return side


def answer_keys(reference: str, question: str) -> set[str]:
    """What in the reference looks like the answer: the numbers (for "how many", "when") or
    names (for "who", "which"; for other questions the numbers if any, else the names) that
    the question does not hold."""
    kind = answer_kind(question)
    q = set(terms(question))
    toks = tokenize(reference)
    nums = {t.norm for t in toks if t.kind == "num" and t.norm not in q}
    names = {t.norm for k, t in enumerate(toks)
             if k and t.capital and not t.stop and t.kind == "word" and t.norm not in q}
    if kind == "name":
        return names
    return nums if nums or kind == "number" else names  # a value, when the reference has one


def _other_value(text: str, keys: set[str]) -> bool:
    """``text`` states numbers and none of the reference's answer numbers."""
    nums = {t.norm for t in tokenize(text) if t.kind == "num"}
    wanted = {k for k in keys if any(ch.isdigit() for ch in k)}
    return bool(wanted) and bool(nums) and not nums & wanted


def _values_differ(reference: str, text: str, keys: set[str]) -> str:
    """``"$29, $290 vs $24, $240"``: the reference's answer numbers, then the chunk's."""
    def shown(toks: Sequence[Any], wanted: set[str] | None) -> str:
        nums = [t.text for t in toks if t.kind == "num" and (wanted is None or t.norm in wanted)]
        return ", ".join(dict.fromkeys(nums[:3]))
    return f"{shown(tokenize(reference), keys)} vs {shown(tokenize(text), None)}"


def _states_value(la: LookAlike) -> bool:
    """The look-alike states another value (a number, a date, a version) somewhere."""
    return any(any(ch.isdigit() for ch in d.mine + d.theirs) for d in la.differences)
