"""Features of a (premise, claim) pair and the hard cues that decide contradiction.

A premise is analysed once (cached): its sentences' content stems, quantities, negated
words and capitalised words. A claim is compared with the whole premise and with its best
window (one or two adjacent sentences), so a long chunk that mentions every word somewhere
does not pass for one that says the claim in one place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from .split import sentence_spans
from .text import MONTHS, NEGATIONS, Quantity, Token, quantities, tokenize

__all__ = ["FEATURES", "Analysis", "Cues", "analyse", "pair_features"]

FEATURES = ("cov", "cov_win", "cov_fuzzy", "cov_plain", "ent_cov", "has_ent", "miss_w",
            "miss_max", "bigram", "run", "n_log", "prem_log", "num_miss", "neg_diff", "antonym")

# Stems of opposite pairs; a claim word whose opposite stands in the premise is a contradiction cue.
_ANTONYM_PAIRS = [
    ("increas", "decreas"), ("rise", "fall"), ("rais", "lower"), ("before", "after"),
    ("more", "less"), ("more", "fewer"), ("higher", "lower"), ("larger", "smaller"),
    ("largest", "smallest"), ("includ", "exclud"), ("allow", "prohibit"), ("allow", "forbid"),
    ("accept", "reject"), ("win", "lose"), ("won", "lost"), ("open", "close"), ("enabl", "disabl"),
    ("maximum", "minimum"), ("first", "last"), ("earlier", "later"), ("earliest", "latest"),
    ("free", "paid"), ("male", "femal"), ("north", "south"), ("east", "west"), ("success", "fail"),
    ("possibl", "imposs"), ("legal", "illeg"), ("true", "fals"), ("alway", "never"),
    ("above", "below"), ("buy", "sell"), ("import", "export"), ("gain", "loss"),
    ("start", "end"), ("older", "younger"), ("oldest", "youngest"), ("internal", "external"),
    ("monthly", "annual"), ("major", "minor"), ("add", "remov"), ("add", "drop"), ("public", "privat"), ("junior", "senior"),
    ("가능", "불가능"), ("증가", "감소"), ("포함", "제외"), ("허용", "금지"), ("이전", "이후"),
    ("최대", "최소"), ("유료", "무료"), ("상승", "하락"), ("성공", "실패"), ("월간", "연간"),
]
_ANTONYMS: dict[str, set[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS.setdefault(_a, set()).add(_b)
    _ANTONYMS.setdefault(_b, set()).add(_a)


@dataclass(frozen=True)
class Analysis:
    """One text, ready for comparison (premises and claims share this shape)."""

    tokens: tuple[Token, ...]
    content: tuple[int, ...]            # indices of content tokens
    sentences: tuple[frozenset[str], ...]
    sent_of: tuple[int, ...]            # sentence index of each token
    norms: frozenset[str]
    prefixes: frozenset[str]            # Hangul word prefixes and 5-letter Latin prefixes
    quantities: tuple[Quantity, ...]
    negated: tuple[frozenset[str], ...]  # per sentence: content stems in a negation's scope
    bigrams: frozenset[tuple[str, str]]
    entities: frozenset[str]            # stems written with a capital not at sentence start
    initial: frozenset[str]             # capitalised sentence-initial stems


def _weight(tok: Token, entity: bool) -> float:
    """IDF stand-in: names and numbers weigh most, long words more than short ones."""
    if tok.kind == "num" or entity:
        return 2.0
    n = len(tok.norm)
    if tok.hangul:
        return 1.5 if n >= 2 else 1.0
    return 1.5 if n >= 7 else (1.0 if n >= 4 else 0.7)


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """Tokens, sentences and cues of ``text`` (cached: premises repeat across claims)."""
    tokens: list[Token] = []
    sent_of: list[int] = []
    sentence_sets: list[frozenset[str]] = []
    entities: set[str] = set()
    initial: set[str] = set()  # capitalised only because they start a sentence (or a name)
    for si, (a, b) in enumerate(sentence_spans(text) or [(0, len(text))]):
        toks = tokenize(text[a:b])
        for k, t in enumerate(toks):
            if t.kind == "word" and t.capital and not t.stop:
                (entities if k > 0 else initial).add(t.norm)
        tokens.extend(toks)
        sent_of.extend([si] * len(toks))
        sentence_sets.append(frozenset(t.norm for t in toks if not t.stop))
    tt = tuple(tokens)
    content = tuple(i for i, t in enumerate(tt) if not t.stop)
    prefixes: set[str] = set()
    for i in content:
        t = tt[i]
        if t.hangul:
            low = t.text.lower()
            prefixes.update(low[:k] for k in range(2, len(low) + 1))
        elif len(t.norm) >= 5:
            prefixes.add(t.norm[:5])
    negated: list[set[str]] = [set() for _ in sentence_sets]
    for i, t in enumerate(tt):
        if _is_negation(tt, i):
            scope = range(i + 1, min(i + 4, len(tt))) if not t.hangul \
                else range(max(0, i - 2), i)  # Korean negation follows the verb it negates
            negated[sent_of[i]].update(tt[j].norm for j in scope if not tt[j].stop
                                       and tt[j].norm not in NEGATIONS)
    cn = [tt[i].norm for i in content]
    return Analysis(tt, content, tuple(sentence_sets), tuple(sent_of), frozenset(cn),
                    frozenset(prefixes), tuple(quantities(tt)),
                    tuple(frozenset(n) for n in negated), frozenset(pairwise(cn)),
                    frozenset(entities), frozenset(initial))


def _is_negation(tt: tuple[Token, ...], i: int) -> bool:
    t = tt[i]
    if not (t.text.lower() in NEGATIONS or t.norm in NEGATIONS):
        return False
    if i + 1 < len(tt) and tt[i + 1].norm in ("onli", "just", "longer"):
        return False  # "not only X but Y" asserts X
    # A sentence-initial "No"/"Not" answering a question is an interjection, not a negation.
    return not (t.text.lower() in ("no", "not") and (i == 0 or tt[i - 1].text.lower() in ("yes", "oh")))


@dataclass(frozen=True)
class Cues:
    """Hard evidence about a pair: a mismatch that rules out entailment, and whether the
    premise clearly talks about the same thing (which makes the mismatch a contradiction)."""

    mismatch: bool
    contradiction: bool
    reason: str | None


def _covered_fuzzy(norm: str, text: str, hangul: bool, prem: Analysis) -> bool:
    if norm in prem.norms:
        return True
    if hangul:
        low = text.lower()
        return norm in prem.prefixes or any(low[:k] in prem.norms for k in range(2, len(low)))
    return len(norm) >= 6 and norm[:5] in prem.prefixes


def _qty_match(q: Quantity, prem: Analysis) -> str:
    """'same' when the premise states this value (compatible unit), 'other' when it states the
    same kind of quantity with another value, else 'absent'."""
    q_unit, _, q_rate = q.unit.partition("/")
    hard = q_unit and not q_unit.startswith("w:")
    other = False
    for p in prem.quantities:
        p_unit, _, p_rate = p.unit.partition("/")
        p_hard = p_unit and not p_unit.startswith("w:")
        rate_ok = not q_rate or not p_rate or q_rate == p_rate  # $49 vs $49 per month: fine
        if p.value == q.value and rate_ok and (not hard or not p_hard or p_unit == q_unit):
            return "same"
        if q_unit and p_unit == q_unit:
            other = True
    return "other" if other else "absent"


def pair_features(prem: Analysis, claim: Analysis) -> tuple[list[float], Cues]:
    """Feature vector (order of ``FEATURES``) and hard cues of ``claim`` against ``prem``."""
    toks = claim.tokens
    items = []  # (norm, weight, entity, exact, fuzzy)
    for k in claim.content:
        t = toks[k]
        ent = t.norm in claim.entities or t.kind == "num" or t.text.lower() in MONTHS
        exact = t.norm in prem.norms
        items.append((t.norm, _weight(t, ent), ent, exact,
                      exact or _covered_fuzzy(t.norm, t.text, t.hangul, prem)))
    total = sum(w for _, w, *_ in items) or 1.0
    cov = sum(w for _, w, _, e, _ in items if e) / total
    cov_fuzzy = sum(w for _, w, _, _, f in items if f) / total
    cov_plain = (sum(1 for *_, e, _ in items if e) / len(items)) if items else 1.0
    ents = [e for _, _, ent, e, _ in items if ent]
    ent_cov = sum(ents) / len(ents) if ents else 1.0
    missing = [w for _, w, _, _, f in items if not f]
    # Best window: one sentence or two adjacent ones.
    sets = prem.sentences
    best, best_i = 0.0, 0
    for i in range(len(sets)):
        win = _window(sets, i)
        c = sum(w for n, w, *_ in items if n in win) / total
        if c > best:
            best, best_i = c, i
    norms = [n for n, *_ in items]
    pairs = list(pairwise(norms))
    bigram = sum(1 for p in pairs if p in prem.bigrams) / len(pairs) if pairs else cov
    run = cur = 0
    for *_, f in items:
        cur = cur + 1 if f else 0
        run = max(run, cur)
    # Topic: how much of the claim *besides* its names and numbers the best window holds.
    topic_total = sum(w for _, w, ent, *_ in items if not ent)
    topic = sum(w for n, w, ent, *_ in items if not ent and n in _window(sets, best_i)) \
        / topic_total if topic_total else best
    cues = _cues(prem, claim, items, topic, best_i)
    feats = [cov, best, cov_fuzzy, cov_plain, ent_cov, 1.0 if ents else 0.0,
             math.log1p(sum(missing)), max(missing, default=0.0), bigram,
             run / len(items) if items else 1.0, math.log1p(len(items)),
             math.log1p(len(prem.content)), 1.0 if cues.reason == "number" else 0.0,
             1.0 if cues.reason == "negation" else 0.0, 1.0 if cues.reason == "antonym" else 0.0]
    return feats, cues


def _window(sets: tuple[frozenset[str], ...], i: int) -> frozenset[str]:
    """Sentence ``i`` and the next one."""
    return sets[i] | sets[i + 1] if i + 1 < len(sets) else sets[i] if sets else frozenset()


def _cues(prem: Analysis, claim: Analysis, items: list[tuple[str, float, bool, bool, bool]],
          topic: float, best_i: int) -> Cues:
    # "About the same thing": most of the claim's other content is in one place in the premise.
    on_topic = topic >= 0.6
    for q in claim.quantities:
        state = _qty_match(q, prem)
        if state != "same":
            return Cues(True, on_topic and state == "other", "number")
    claim_months = {t.text.lower() for t in claim.tokens if t.text.lower() in MONTHS}
    prem_months = {t.text.lower() for t in prem.tokens if t.text.lower() in MONTHS}
    if claim_months - prem_months:
        return Cues(True, on_topic and bool(prem_months), "number")
    # Negation: a word negated on one side and asserted on the other, in the best window.
    claim_words = {n for n, *_ in items}
    claim_neg = frozenset().union(*claim.negated) if claim.negated else frozenset()
    win_neg = _window(prem.negated, best_i)
    win = _window(prem.sentences, best_i)
    if (claim_neg - win_neg) & win or (win_neg - claim_neg) & claim_words:
        return Cues(True, on_topic, "negation")
    if claim_neg and not win_neg and topic >= 0.8:
        return Cues(True, True, "negation")
    for n, *_rest in items:
        opposite = _ANTONYMS.get(n)
        if opposite and n not in win and opposite & win - claim_words:
            return Cues(True, on_topic, "antonym")
    swap = _entity_swap(prem, claim, best_i)
    if swap:
        return Cues(True, on_topic, "entity")
    return Cues(False, False, None)


def _entity_swap(prem: Analysis, claim: Analysis, best_i: int) -> bool:
    """A claim name missing from the premise whose neighbour word in the best window has
    another name next to it: "Enterprise plan" vs "Pro plan", "Model X" vs "Model Y"."""
    toks = claim.tokens
    ptoks = prem.tokens
    in_window = [i for i, s in enumerate(prem.sent_of) if s in (best_i, best_i + 1)]
    for k, t in enumerate(toks):
        if not (t.norm in claim.entities or t.norm in claim.initial) or t.norm in prem.norms:
            continue
        for step in (1, -1):
            j = k + step
            if not 0 <= j < len(toks) or toks[j].stop or toks[j].kind != "word":
                continue
            anchor = toks[j].norm
            for pi in in_window:
                pj = pi - step
                if ptoks[pi].norm != anchor or not 0 <= pj < len(ptoks):
                    continue
                other = ptoks[pj]
                if other.capital and not other.stop and other.norm not in claim.norms \
                        and other.norm != anchor and prem.sent_of[pj] == prem.sent_of[pi]:
                    return True
    return False
