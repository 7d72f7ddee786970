"""Drafting a reference: which chunks hold the answer, and which of their sentences say it.

Offline and deterministic. A question's content terms (``retrieve.terms``) are weighted by
their rarity in the corpus (BM25's idf); a sentence *bears the answer* when it covers the
question's weight (with its chunk's heading and source name, which carry the tier or year)
and says something the question does not, of the kind asked for (a number for "how many",
a name for "who"). The best chunk is the one with the best such sentence; its best sentence,
and a second one as good, with the sentences they lean on ("He ..." and who he is), are the
extractive reference.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..textkit.sentences import sentences
from ..textkit.tokens import is_hangul, tokenize
from .retrieve import Index, terms

__all__ = ["Ranked", "answer_kind", "rank_chunks", "sentence_score", "draft_reference",
           "NO_ANSWER_BELOW"]

#: A best chunk scoring below this answers nothing: the row is ``no_answer``.
NO_ANSWER_BELOW = 0.3
#: ... or, scoring below ``WEAK_ANSWER``, holds less than this share of what the question
#: asks, names left out (only the names matched: "Lumen" in an e-mail address).
NO_ANSWER_ASKED = 0.01
WEAK_ANSWER = 0.4
#: A second sentence of the chunk joins the reference when it scores this share of the best.
SECOND_SENTENCE = 0.3
#: A runner-up scoring this share of the best may be the other end of a bridge...
BRIDGE_CLOSE = 0.3
#: ... when the two share a term this rare (a share of the rarest idf).
BRIDGE_IDF = 0.6
#: Sentences after the picked ones that may join a reference for a question's second hop.
MORE_SENTENCES = 2
#: BM25 candidates read for each question.
CANDIDATES = 20
#: In a chat, what a term of the earlier user turns weighs at most: this share of the
#: question's lightest term. It says what an elliptical question ("And for monthly plans?")
#: is about, and the question's own words still decide: the earlier "annual" (rare, and next
#: to its "what") never outweighs the "monthly" that replaced it.
EARLIER_TURNS = 0.5

_NUMBER_Q = re.compile(r"\b(how (many|much|long|old|far|often|big|large)|what (year|percentage|"
                       r"number|amount|price)|when)\b|몇|며칠|얼마|언제", re.IGNORECASE)
_NAME_Q = re.compile(r"\b(who|whom|whose|which|where)\b|누구|어느|어디", re.IGNORECASE)


def answer_kind(question: str) -> str:
    """``number`` (how many, when, 몇), ``name`` (who, which), or ``any``.

    >>> answer_kind("How many days do I have?"), answer_kind("Who wrote it?")
    ('number', 'name')
    """
    if _NUMBER_Q.search(question):
        return "number"
    if _NAME_Q.search(question):
        return "name"
    return "any"


@dataclass(frozen=True)
class Ranked:
    """A candidate chunk: its score and its sentences, best first, with their scores."""

    index: int
    score: float
    coverage: float
    sentences: tuple[tuple[str, float], ...]
    #: The score before a superseded chunk's penalty: how well it answers, old or not.
    raw: float = 0.0


#: A chunk that says it is superseded ("archive", "before the 2023 update", "v1 (old)")
#: ranks a little lower: it is drafted from only when nothing current answers as well,
#: and a current chunk beside it is a conflict flagged for a person, never a silent pick.
_OLD = re.compile(r"\b(archived?|before the|previous(ly)?|formerly|used to|deprecated|legacy|"
                  r"no longer|superseded|old(er)? version)\b|이전|구버전", re.IGNORECASE)
OLD_VERSION_PENALTY = 0.8

_WH = re.compile(r"^(what|which|who|whom|whose|when|where|how|몇|며칠|얼마|언제|누구|어느|어디)",
                 re.IGNORECASE)
#: "how *long*", "how *many*": part of the question word, not what the answer is about.
_HOW_WORDS = frozenset({"long", "many", "much", "old", "far", "often", "big", "large",
                        "soon", "tall", "high"})
#: How much more a question term next to the wh-word weighs ("head office in *what* city"):
#: the words around the gap say what the answer sentence is about.
NEAR_WH = 3.0
#: How much more a name of the question weighs (a chunk without it is about something else).
NAME_BOOST = 2.0


def question_weights(index: Index, question: str, earlier: str = "") -> dict[str, float]:
    """Each content term of the question with its weight: its idf, more near the wh-word;
    the terms of ``earlier`` (a chat's last user turns) the question lacks, each at most
    ``EARLIER_TURNS`` of the question's lightest term; but when the question names nothing
    ("Does *it* include phone support?"), the names of the earlier turns are what it asks
    about, and keep ``EARLIER_TURNS`` of their weight."""
    out = _weights(index, question)
    cap = EARLIER_TURNS * min(out.values(), default=float("inf"))
    its_subject = (_asked_names(earlier) if earlier and not _asked_names(question)
                   else set())
    for t, w in _weights(index, earlier).items() if earlier else ():
        out.setdefault(t, EARLIER_TURNS * w if t in its_subject else min(EARLIER_TURNS * w, cap))
    return out


def _weights(index: Index, question: str) -> dict[str, float]:
    toks = tokenize(question)
    wh = [k for k, t in enumerate(toks) if _WH.match(t.text)]
    out: dict[str, float] = {}
    for k, t in enumerate(toks):
        if t.stop or t.kind == "sym" or (k and toks[k - 1].text.lower() == "how"
                                         and t.text.lower() in _HOW_WORDS):
            continue
        near = min((abs(k - w) for w in wh), default=None)
        boost = 1.0 + (NEAR_WH * math.exp(-(near - 1) / 3) if near is not None else 0.0)
        if k and (t.capital or t.kind == "code"):  # a name: what the question is about
            boost *= NAME_BOOST
        out[t.norm] = max(out.get(t.norm, 0.0), index.idf(t.norm) * boost)
    return out


def gap_terms(question: str) -> frozenset[str]:
    """The question's terms at its gap: up to three tokens after a wh-word, one before
    ("which *state*", "head office in what *city*"): what the answer sentence is about.

    >>> sorted(gap_terms("Which state are the stores in?"))
    ['state']
    """
    toks = tokenize(question)
    wh = [k for k, t in enumerate(toks) if _WH.match(t.text)]
    return frozenset(t.norm for k, t in enumerate(toks) if not t.stop and t.kind != "sym"
                     and not (k and toks[k - 1].text.lower() == "how"
                              and t.text.lower() in _HOW_WORDS)
                     and any(0 < k - w <= 3 or 0 < w - k <= 1 for w in wh))


def _bridged(index: Index, question: str, out: list[Ranked]) -> list[Ranked]:
    """Two passages joined by a rare name the question does not hold (a bridge: "Warren
    Bryant was CEO of Longs Drugs" / "Longs Drugs has stores in Hawaii"): the question
    describes the first and asks what the second adds, so the one holding more of the
    question's gap terms answers it."""
    if len(out) < 2 or out[1].score < BRIDGE_CLOSE * out[0].score:
        return out
    a, b = out[0].index, out[1].index
    q = set(terms(question))
    shared = (index.term_sets[a] & index.term_sets[b]) - q
    if not any(index.idf(t) >= BRIDGE_IDF * index.oov_idf for t in shared):
        return out
    gap = gap_terms(question)
    if len(gap & index.term_sets[b]) > len(gap & index.term_sets[a]):
        return [out[1], out[0], *out[2:]]
    return out


def _hangul_prefixed(missing: set[str], found: set[str]) -> set[str]:
    """Korean terms the stemmer left with an ending on one side ("환불받" for "환불",
    "결제" for "결제일로"): held when one is the other's start, two syllables or more."""
    out = set()
    for t in missing:
        if len(t) >= 2 and is_hangul(t) and any(
                len(f) >= 2 and (f.startswith(t) or t.startswith(f)) for f in found):
            out.add(t)
    return out


def sentence_score(index: Index, q_terms: Mapping[str, float], kind: str, sentence: str,
                   context_terms: frozenset[str]) -> tuple[float, float]:
    """(score, coverage) of ``sentence`` as the answer to a question of ``q_terms``.

    Coverage: the share of the question's weight found in the sentence or its chunk's
    heading (``context_terms``); the score lowers it for a sentence that adds nothing to the
    question, or nothing of the kind asked for.
    """
    q = set(q_terms)
    total = sum(q_terms.values())
    if not total:
        return 0.0, 0.0
    s_terms = set(terms(sentence))
    held = q & (s_terms | context_terms)
    held |= _hangul_prefixed(q - held, s_terms)
    coverage = sum(q_terms[t] for t in held) / total
    new = s_terms - q
    score = coverage
    if not new:
        score *= 0.3
    elif kind == "number" and not any(t.kind == "num" and t.norm not in q
                                      for t in tokenize(sentence)):
        score *= 0.7
    elif kind == "name" and not any(t.capital and t.norm not in q for t in tokenize(sentence)[1:]):
        score *= 0.85
    # a sentence that covers the question in few words says it more plainly
    return score * (1.0 - min(0.1, 0.002 * max(0, len(s_terms) - 20))), coverage


def rank_chunks(index: Index, question: str, candidates: Sequence[int] | None = None,
                earlier: str = "") -> list[Ranked]:
    """Candidate chunks (BM25's best, or the given ones), best answer first; ``earlier``:
    a chat's last user turns before the question, which say what it is about."""
    q_terms = question_weights(index, question, earlier)
    kind = answer_kind(question)
    if kind == "any" and earlier:  # "And for monthly plans?" asks what the turn before did
        kind = answer_kind(earlier)
    if candidates is None:
        candidates = [i for i, _ in index.search(terms(f"{earlier} {question}"), CANDIDATES)]
    out: list[Ranked] = []
    for i in candidates:
        chunk = index.chunks[i]
        context = frozenset(terms(f"{chunk.title} {chunk.source}"))
        scored = sorted(((s, *sentence_score(index, q_terms, kind, s, context))
                         for s in sentences(chunk.text)), key=lambda x: -x[1])
        if not scored:
            continue
        best, cov = scored[0][1], scored[0][2]
        chunk_cov = sentence_score(index, q_terms, "any", chunk.text, context)[1]
        superseded = OLD_VERSION_PENALTY if _OLD.search(
            f"{chunk.id} {chunk.title} {chunk.text}") else 1.0
        raw = 0.85 * best + 0.15 * chunk_cov
        out.append(Ranked(i, raw * superseded, cov, tuple((s, sc) for s, sc, _ in scored), raw))
    out.sort(key=lambda r: -r.score)
    return _bridged(index, question, out)


def draft_reference(ranked: Ranked, text: str, question: str = "") -> str:
    """The extractive reference from one chunk (``text``): its best sentence; the runner-up
    when it scores ``SECOND_SENTENCE`` of the best and holds a question term the best does
    not; a sentence holding the question's gap terms ("played by *actress* ...") when the
    best does not; what those lean on (``_completed``); in the chunk's own order."""
    best = ranked.sentences[0]
    picked = [best[0]]
    q = set(terms(question)) if question else set()
    if len(ranked.sentences) > 1 and ranked.sentences[1][1] >= SECOND_SENTENCE * best[1] > 0:
        second = ranked.sentences[1][0]
        # it joins only for what it adds of the question ("refunds" again does not)
        if not q or (set(terms(second)) & q) - set(terms(best[0])):
            picked.append(second)
    gap = gap_terms(question) if question else frozenset()
    if gap and not gap & set(terms(best[0])):
        for s, _ in ranked.sentences[1:]:
            if gap & set(terms(s)) and s not in picked:
                picked.append(s)
                break
    if question:
        picked = _completed(picked, sentences(text), q)
    return " ".join(sorted(picked, key=text.find))


#: A sentence that starts by pointing back ("He", "The band"): who it is about is named
#: in the sentence before.
_ANAPHOR = re.compile(r"^(he|she|it|they|his|her|its|their|this|these|those)\b", re.IGNORECASE)


def _names(sentence: str) -> set[str]:
    return {t.norm for t in tokenize(sentence) if not t.stop and (t.capital or t.kind == "code")}


def _asked_names(question: str) -> set[str]:
    """The names a question holds (capitalised words after its first, codes), as
    ``_weights`` boosts them."""
    return {t.norm for k, t in enumerate(tokenize(question))
            if k and not t.stop and (t.capital or t.kind == "code")}


def _points_back(sentence: str) -> bool:
    toks = tokenize(sentence)
    return bool(_ANAPHOR.match(sentence)) or (
        len(toks) > 1 and toks[0].text == "The" and toks[1].kind == "word"
        and not toks[1].capital)


def _completed(picked: list[str], order: Sequence[str], q: set[str]) -> list[str]:
    """The picked sentences with what they lean on: the sentence before one that points
    back ("He ..."), and the sentences after that go on about a name the picked ones
    brought in and hold a question term they do not (the second hop of a question,
    inside one chunk: "... had acquired Aixam-Mega." / "Polaris is based in Roseau.")."""
    out = list(picked)
    where = {s: k for k, s in enumerate(order)}
    for s in list(out):
        k = where.get(s)
        if k and _points_back(s) and order[k - 1] not in out:
            out.append(order[k - 1])
    for _ in range(MORE_SENTENCES):
        ks = [where[s] for s in out if s in where]
        nxt = max(ks, default=-1) + 1
        if not ks or nxt >= len(order):
            break
        s = order[nxt]
        have = set().union(*(set(terms(x)) for x in out))
        brought = set().union(*(_names(x) for x in out)) - q
        about = terms(s)[:1]  # "Polaris is based in ...": about a name brought in
        if not (brought & _names(s) or _points_back(s)) or not (
                (set(terms(s)) & q) - have or brought & set(about)):
            break
        out.append(s)
    return out


def asked_share(index: Index, question: str, ranked: Ranked) -> float:
    """The share of the question's weight, names left out, that the chunk holds: what is
    asked about the names, not the names alone ("a student *discount*" at "Lumen Notes").
    1.0 for a question of names only."""
    toks = tokenize(question)
    asked = {t.norm for k, t in enumerate(toks)
             if not t.stop and t.kind not in ("sym", "code") and not (k and t.capital)}
    total = sum(index.idf(t) for t in asked)
    if not total:
        return 1.0
    chunk = index.chunks[ranked.index]
    held = index.term_sets[ranked.index] | frozenset(terms(f"{chunk.title} {chunk.source}"))
    return sum(index.idf(t) for t in asked & held) / total


def confidence(ranked: Sequence[Ranked]) -> float:
    """How sure the draft is: the best chunk's coverage, less when the runner-up is close."""
    if not ranked:
        return 0.0
    best = ranked[0].score
    second = ranked[1].score if len(ranked) > 1 else 0.0
    margin = (best - second) / best if best else 0.0
    return max(0.0, min(1.0, ranked[0].coverage * (0.6 + 0.4 * margin)))
