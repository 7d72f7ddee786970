"""Features of a (premise, claim) pair and the hard cues that decide contradiction.

A premise is analysed once (cached): per sentence, its content stems, quantities, codes,
negated words and capitalised words. A claim is aligned with its best window (one to three
consecutive sentences) and its best single sentence, so a long chunk that mentions every word
somewhere does not pass for one that says the claim in one place, and a cue (a negation, an
opposite, another name or number) only counts where the premise talks about the claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ...textkit.quantity import quantities
from ...textkit.sentences import sentence_spans
from ...textkit.tokens import MONTHS, NEGATIONS, Token, answer_polarity, tokenize
from .amounts import NO_AMOUNT, qty_match, says
from .analysis import Analysis
from .rules import on
from .slots import colour_swap, heading_swap, heading_words, slot_swap

__all__ = ["FEATURES", "MONOTONE", "Alignment", "Analysis", "Cues", "align", "analyse",
           "pair_features"]

FEATURES = ("cov", "cov_win", "cov_sent", "cov_fuzzy", "cov_plain", "ent_cov", "miss_w",
            "miss_max", "bigram", "lcs", "num_miss", "neg_diff", "antonym", "full", "n_miss",
            "ent_absent", "op_miss", "self_ref")
#: Direction each feature may move p(entailed) in (+1 up, -1 down, 0 free): the combiner is
#: trained under these constraints so it cannot learn a dataset quirk that reverses them.
#: Nothing measures the claim's or the premise's length: in the training sets length tells
#: the source (and HaluEval's right answers from its hallucinated ones), not entailment.
MONOTONE = (1, 1, 1, 1, 1, 1, -1, -1, 1, 1, -1, -1, -1, 1, -1, -1, -1, -1)

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
    ("month", "annual"), ("major", "minor"), ("add", "remov"), ("add", "drop"),
    ("public", "privat"), ("junior", "senior"),
    ("가능", "불가능"), ("증가", "감소"), ("포함", "제외"), ("허용", "금지"), ("이전", "이후"),
    ("최대", "최소"), ("유료", "무료"), ("상승", "하락"), ("성공", "실패"), ("월간", "연간"),
]
_ANTONYMS: dict[str, set[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS.setdefault(_a, set()).add(_b)
    _ANTONYMS.setdefault(_b, set()).add(_a)

_MAX_WINDOW = 3  # sentences

#: "등록할 필요가 없습니다" (no need to register) denies the need, like "등록하지 않아도 됩니다":
#: the negation's head is the verb before "필요".
_NEED = frozenset(["필요"])

#: Function words that carry the claim's logic (quantity, comparison, order, exclusivity):
#: stop words for coverage, but "both", "only" or "before" absent from the premise is a claim
#: the premise does not make ("Both X and Y were inducted", "Lydia Davis was born first").
#: ("most" and "least" are left out: "at most 10 days" is how "within 10 days" is retold.)
OPERATORS = frozenset(["both", "only", "all", "every", "each", "same", "other", "more",
                       "less", "fewer", "than", "before", "after", "over", "under",
                       "between", "neither", "either", "many", "few", "until", "again", "never",
                       "always", "first", "last", "also"])
#: Of those, the universal and exclusive ones: absent from the aligned window they rule out
#: entailment outright, even for an otherwise verbatim claim ("Only annual plans ...").
_HARD_OPERATORS = frozenset(["both", "only", "all", "every", "neither", "either", "never",
                             "always"])
#: The speaker talking about themself ("I love it"): no document attributes that to them.
_SELF = frozenset(["i", "me", "my", "mine", "myself"])


def _weight(tok: Token, entity: bool) -> float:
    """IDF stand-in: names and numbers weigh most, long words more than short ones. (Weights
    from word frequencies, wordfreq's Zipf scale, were measured: cross-source mean 0.743
    against 0.745, worse on BEGIN; not kept.)"""
    if tok.kind in ("num", "code") or entity:
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
    sentence_words: list[frozenset[str]] = []
    entities: set[str] = set()
    initial: set[str] = set()  # capitalised only because they start a sentence (or a name)
    heads: list[frozenset[str]] = []
    after_heading: set[int] = set()
    content: list[int] = []
    prefixes: set[str] = set()
    codes: set[str] = set()
    positions: dict[str, list[int]] = {}  # stem -> its ranks among the content tokens
    where: dict[str, list[int]] = {}      # stem -> its token indices
    masks: dict[str, int] = {}            # stem -> the sentences holding it, as bits
    in_sentences: dict[str, list[int]] = {}  # stem -> the same, as indices
    maybe_neg: list[int] = []
    # One pass over the tokens builds every per-token table (in token order, so each
    # dict's keys stand in first-occurrence order).
    for si, (a, b) in enumerate(sentence_spans(text) or [(0, len(text))]):
        sentence = text[a:b]
        toks = tokenize(sentence)
        heading, n = heading_words(sentence, toks)
        heads.append(heading)
        base = len(tokens)
        if n:
            after_heading.add(base + n)
        bit = 1 << si
        stems: set[str] = set()
        words: set[str] = set()
        for k, t in enumerate(toks):
            low = t.text.lower()
            words.add(low)
            if t.hangul or low in NEGATIONS or t.norm in NEGATIONS:
                maybe_neg.append(base + k)
            if t.stop:
                continue
            norm = t.norm
            stems.add(norm)
            i = base + k
            at = where.get(norm)
            if at is None:
                positions[norm] = [len(content)]
                where[norm] = [i]
                masks[norm] = bit
                in_sentences[norm] = [si]
            else:
                positions[norm].append(len(content))
                at.append(i)
                if not masks[norm] & bit:
                    masks[norm] |= bit
                    in_sentences[norm].append(si)
            content.append(i)
            kind = t.kind
            if kind == "word" and t.capital:
                (entities if k > 0 else initial).add(norm)
            elif kind == "code":
                codes.add(norm)
            if t.hangul:
                prefixes.update(low[:j] for j in range(2, len(low) + 1))
            elif len(norm) >= 5:
                prefixes.add(norm[:5])
        tokens.extend(toks)
        sent_of.extend([si] * len(toks))
        sentence_sets.append(frozenset(stems))
        sentence_words.append(frozenset(words))
    tt = tuple(tokens)
    negated: list[set[str]] = [set() for _ in sentence_sets]
    for i in maybe_neg:
        if _is_negation(tt, i):
            head = _negated_head(tt, i, sent_of)
            if head is not None:
                negated[sent_of[i]].add(head)
    return Analysis(tt, tuple(content), tuple(sentence_sets), tuple(sent_of),
                    frozenset(positions), frozenset(prefixes),
                    tuple(quantities(tt)), tuple(frozenset(n) for n in negated),
                    {k: tuple(v) for k, v in positions.items()}, frozenset(entities),
                    frozenset(initial), frozenset(codes),
                    tuple(sentence_words), tuple(heads),
                    {k: tuple(v) for k, v in where.items()},
                    frozenset(after_heading), answer_polarity(text),
                    masks, {k: tuple(v) for k, v in in_sentences.items()})


def _negated_head(tt: tuple[Token, ...], i: int, sent_of: list[int]) -> str | None:
    """The word a negation denies: the first content word after it in its sentence ("not
    refundable"), or before it in Korean ("해지할 수 없습니다"). Only that word, so "not per
    token" or "but not monthly plans" does not deny the rest of the sentence."""
    scope = range(i + 1, min(i + 4, len(tt))) if not tt[i].hangul else range(i - 1, max(-1, i - 3), -1)
    for j in scope:
        if sent_of[j] != sent_of[i]:
            return None
        if not tt[j].stop and tt[j].norm not in NEGATIONS and tt[j].norm not in _NEED:
            return tt[j].norm
    return None


#: "미제공" (not provided), "미지원": the prefix 미 denies these nouns (not "미국", "미용").
_MI_DENIED = frozenset(["제공", "지원", "포함", "적용", "가입", "발급", "허용", "사용", "이용", "보장",
                        "제출", "납부", "개통", "설치", "인증", "등록", "대상", "운영", "판매"])


def _is_negation(tt: tuple[Token, ...], i: int) -> bool:
    t = tt[i]
    if t.hangul and t.text.startswith(("않", "없", "못")):
        return True  # 않아도, 없어서, 못했습니다: every inflection of the three negators
    if t.hangul and (t.text.startswith("불가") or (t.norm[:1] == "미" and t.norm[1:] in _MI_DENIED)):
        return True  # "개인 락커 미제공", "환불 불가": denies the noun before it
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


_NO_CUE = Cues(False, False, None)


def _covered_fuzzy(norm: str, text: str, hangul: bool, prem: Analysis) -> bool:
    if norm in prem.norms:
        return True
    if hangul:
        low = text.lower()
        return norm in prem.prefixes or any(low[:k] in prem.norms for k in range(2, len(low)))
    return len(norm) >= 6 and norm[:5] in prem.prefixes


Item = tuple[str, float, bool, bool, bool]  # (stem, weight, is name/number, exact, fuzzy)


@dataclass(frozen=True)
class Alignment:
    """A pair's features and cues, with the aligned window and the claim words missing from
    it (text, weight): what an extra signal (``embed.py``) needs to look further."""

    features: list[float]
    cues: Cues
    window: range
    missing: list[tuple[str, float]]


def pair_features(prem: Analysis, claim: Analysis) -> tuple[list[float], Cues]:
    """Feature vector (order of ``FEATURES``) and hard cues of ``claim`` against ``prem``."""
    a = align(prem, claim)
    return a.features, a.cues


def align(prem: Analysis, claim: Analysis) -> Alignment:
    """``pair_features`` with the window and missing words kept."""
    toks = claim.tokens
    items: list[Item] = []
    weighted = _weighted(claim)
    content = [k for k, *_ in weighted]
    pnorms = prem.norms
    for _k, t, w, ent in weighted:
        norm = t.norm
        exact = norm in pnorms
        items.append((norm, w, ent, exact,
                      exact or _covered_fuzzy(norm, t.text, t.hangul, prem)))
    total = sum(it[1] for it in items) or 1.0
    cov = sum(w for _, w, _, e, _ in items if e) / total
    cov_fuzzy = sum(w for _, w, _, _, f in items if f) / total
    # Best window of 1-3 consecutive sentences, and best single sentence (ties: the shorter).
    # Each item the premise has, with the sentences that have it as bits; sums run in item
    # order, as a plain sum over the items would.
    sets = prem.sentences
    masks = prem.masks
    present = [(w, masks[n]) for n, w, *_ in items if n in masks]
    cover: list[float] = [0] * len(sets)
    anywhere = 0
    in_sentences = prem.in_sentences
    for n, w, *_ in items:
        at = in_sentences.get(n)
        if at is not None:
            anywhere |= masks[n]
            for s in at:
                cover[s] += w
    sent_cov = [c / total for c in cover]
    best, win = 0.0, range(1)
    n_sets = len(sets)
    for i in range(n_sets):
        bound = 0.0
        for j in range(i, min(i + _MAX_WINDOW, n_sets)):
            # A window holds at most its sentences' items: where even their sum cannot beat
            # the best so far, the exact sum is not worked out (the margin dwarfs rounding).
            bound += cover[j]
            if bound / total < best + 1e-9 - 1e-12:
                continue
            span = ((1 << (j + 1)) - 1) ^ ((1 << i) - 1)
            if not span & anywhere:
                continue  # covers nothing: never better than the best so far
            c = sum(w for w, m in present if m & span) / total
            if c > best + 1e-9:
                best, win = c, range(i, j + 1)
    win_set: frozenset[str] = frozenset().union(*(sets[i] for i in win)) if sets else frozenset()
    in_win = [n in win_set for n, *_ in items]
    cov_plain = sum(in_win) / len(items) if items else 1.0
    ents = [x for (_, _, ent, *_), x in zip(items, in_win, strict=True) if ent]
    ent_cov = sum(ents) / len(ents) if ents else 1.0
    # Missing: neither in the window nor matched loosely (a shared prefix) anywhere.
    gone = [(toks[k].text.lower(), w) for k, (_, w, _, e, f), x in zip(content, items, in_win, strict=True)
            if not x and not (f and not e)]
    missing = [w for _, w in gone]
    norms = [n for n, *_ in items]
    pairs = list(pairwise(norms))
    bigram = sum(1 for a, b in pairs if a in win_set and b in win_set and _adjacent(prem, a, b)) \
        / len(pairs) if pairs else best
    lcs = _longest_run(prem, norms) / len(norms) if norms else 1.0
    cues = _cues(prem, claim, items, win, win_set, sent_cov)
    # The claim's last sentence: in "Are both X and Y American? Yes" the question's words are
    # what is answered, not operators the answer asserts.
    claim_words = claim.words[-1] if claim.words else frozenset()
    win_words: frozenset[str] = frozenset().union(*(prem.words[i] for i in win)) \
        if prem.words else frozenset()
    unstated = (claim_words & OPERATORS) - win_words
    op_miss = len(unstated)
    if unstated & _HARD_OPERATORS and not cues.mismatch and on("quantifier"):
        cues = Cues(True, False, "quantifier")
    # A name the premise never mentions stays a feature, not a rule: as a rule it was measured
    # cross-source at HaluEval +0.02, BEGIN -0.02 to -0.05 (dialogue names the knowledge omits).
    absent_names = sum(1 for _, _, ent, _, f in items if ent and not f)
    self_ref = 1.0 if claim_words & _SELF and not win_words & _SELF else 0.0
    feats = [cov, best, max(sent_cov, default=0.0), cov_fuzzy, cov_plain, ent_cov,
             math.log1p(sum(missing)), max(missing, default=0.0), bigram, lcs,
             1.0 if cues.reason in ("number", "code") else 0.0,
             1.0 if cues.reason == "negation" else 0.0,
             1.0 if cues.reason in ("antonym", "entity") else 0.0,
             0.0 if missing else 1.0, float(len(missing)),
             float(absent_names), float(op_miss), self_ref]
    return Alignment(feats, cues, win, gone)


def _weighted(claim: Analysis) -> list[tuple[int, Token, float, bool]]:
    """The claim's content tokens (index, token, weight, is name/number): the same against
    every premise, so worked out once per claim."""
    got = claim.memo.get("weighted")
    if got is None:
        out = []
        for k in claim.content:
            t = claim.tokens[k]
            ent = t.norm in claim.entities or t.kind in ("num", "code") or t.text.lower() in MONTHS
            out.append((k, t, _weight(t, ent), ent))
        claim.memo["weighted"] = got = out
    return got  # type: ignore[return-value]


def _adjacent(prem: Analysis, a: str, b: str) -> bool:
    pb = set(prem.positions.get(b, ()))
    return any(p + 1 in pb for p in prem.positions.get(a, ()))


def _longest_run(prem: Analysis, norms: list[str]) -> int:
    """Longest run of consecutive claim content words that stands verbatim in the premise."""
    best = 0
    runs: dict[int, int] = {}
    positions = prem.positions
    for n in norms:
        at = positions.get(n)
        if not at:
            runs = {}
            continue
        get = runs.get
        runs = {p: get(p - 1, 0) + 1 for p in at}
        longest = max(runs.values())
        if longest > best:
            best = longest
    return best


def _cues(prem: Analysis, claim: Analysis, items: list[Item], win: range,
          win_set: frozenset[str], sent_cov: list[float]) -> Cues:
    # "About the same thing": most of the claim besides its names and numbers is in the window.
    topic_total = sum(w for _, w, ent, *_ in items if not ent)
    topic = sum(w for n, w, ent, *_ in items if not ent and n in win_set) / topic_total \
        if topic_total else 1.0
    on_topic = topic >= 0.6
    # Two answers to one question, one "Yes, ..." and the other "No, ...", disagree whatever
    # words they share ("Yes, Basic includes SAML SSO" / "No. Basic uses password login only;
    # SAML SSO is included on the Business tier").
    if on("yes-no") and claim.polarity and prem.polarity and claim.polarity != prem.polarity:
        return Cues(True, True, "negation")
    for q in claim.quantities:
        state = qty_match(q, prem, win) if on("number") else "same"
        if state != "same":
            return Cues(True, on_topic and state == "other", "number")
    for _code in claim.codes - prem.codes if on("code") else ():
        other = any(t.kind == "code" and prem.sent_of[i] in win for i, t in enumerate(prem.tokens))
        return Cues(True, on_topic and other, "code")
    # "Unlimited calls" is not said by "100 minutes of calls", nor "free withdrawals" by
    # "withdrawals cost 2%": a premise that states an amount (a price, for "free") and never
    # the word sets a limit or a price.
    for word, units in NO_AMOUNT.items() if on("no-amount") else ():
        if says(claim, word) and not says(prem, word) and any(
                prem.sent_of[p.pos] in win and (not units or p.unit in units)
                for p in prem.quantities):
            return Cues(True, on_topic, "number")
    if not sent_cov:
        return _NO_CUE
    # Negation and opposites: judged on the sentence that says the claim best (ties: the one
    # without a conflict), so "After 30 days, plans are not refundable" next to "Plans can be
    # refunded within 30 days" does not deny the latter.
    claim_words = {n for n, *_ in items}
    claim_neg = frozenset().union(*claim.negated) if claim.negated else frozenset()
    top = max(sent_cov)
    order = sorted((i for i, c in enumerate(sent_cov) if c >= top - 1e-9),
                   key=lambda i: _neg_conflict(prem, i, claim_words, claim_neg))
    s = order[0]
    if on("negation") and top >= 0.5 and _neg_conflict(prem, s, claim_words, claim_neg):
        return Cues(True, on_topic, "negation")
    sent = prem.sentences[s]
    for n in claim_words:
        opposite = _ANTONYMS.get(n)
        if opposite and n not in win_set and opposite & sent - claim_words and on("antonym"):
            return Cues(True, on_topic, "antonym")
    # Another entity in the claim's slot, or in the heading of a sentence that otherwise says
    # the claim ("Elite membership: group classes" for "Basic members get group classes").
    topic_items = [(n, w) for n, w, ent, *_ in items if not ent]
    # Only a sentence that says the claim's numbers and codes is the one it was read from: a
    # sentence with another number is the number rule's case ("Free 워크스페이스 ... 30일"
    # beside a "90일" line that says the claim).
    details = {t.norm for t in claim.tokens if t.kind in ("num", "code")}
    # (each sentence's topic words summed item by item, through the premise's sentence bits)
    topic_cover: list[float] = [0] * len(sent_cov)
    for n, w in topic_items:
        for s in prem.in_sentences.get(n, ()):
            topic_cover[s] += w
    denom = topic_total or 1.0
    sent_topic = [details <= sset and (c >= 0.6 or tc / denom >= 0.6)
                  for c, tc, sset in zip(sent_cov, topic_cover, prem.sentences, strict=True)]
    if (on("slot-swap") and slot_swap(prem, claim, sent_topic)) \
            or (on("heading-swap") and heading_swap(prem, claim, sent_topic)) \
            or (on("colour-swap") and colour_swap(prem, claim, sent_topic)):
        return Cues(True, on_topic, "entity")
    return _NO_CUE


def _neg_conflict(prem: Analysis, s: int, claim_words: set[str], claim_neg: frozenset[str]) -> bool:
    """Sentence ``s`` denies a word the claim asserts, or asserts one the claim denies; or the
    claim is negated and the sentence, which says nearly all of it, is not."""
    neg = prem.negated[s]
    sent = prem.sentences[s]
    if (neg - claim_neg) & claim_words or (claim_neg - neg) & sent:
        return True
    # (not where another sentence denies it too: "CS 101 ... (4 credits). No prerequisites.")
    if claim_neg and not neg and not any(claim_neg & n for n in prem.negated):
        words = claim_words - claim_neg
        return bool(words) and len(words & sent) / len(words) >= 0.8
    return False
