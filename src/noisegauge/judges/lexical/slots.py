"""Entity swaps: a claim about one entity is not entailed by a premise about another.

"The spring sale ends on August 31" is not said by "Summer sale: 15% off until August 31",
though every other word is there: the word that names *which* sale is another one. Two
shapes are caught, both only where the premise window otherwise says the claim (most of
its topic words), and only for a claim word the premise never states:

* **same slot**: the claim word and a premise word sit beside the same word ("spring sale" /
  "Summer sale", "서울 리전" / "도쿄 리전") and are of the same kind: both names (capitalised
  or product codes), both of a closed class (months, seasons, weekdays), or, in Korean, which
  has no capitals, both Hangul nouns modifying the same head noun;
* **heading**: the premise sentence opens with a heading ("Elite membership: ...",
  "Shipping within the United States: ...") naming something the claim does not, and the claim
  names (capitalised, or a code) something the premise never states.

A lowercase English word in the same slot is left to the learned combiner: "business days"
against "working days" is a paraphrase far more often than a swap.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...textkit.names import acronym, closed_class
from ...textkit.tokens import Token
from .analysis import Analysis

__all__ = ["colour_swap", "heading_swap", "heading_words", "slot_swap"]

#: A heading is at most this many tokens before a colon at the start of a sentence.
MAX_HEADING = 6


def heading_words(sentence: str, tokens: Sequence[Token]) -> tuple[frozenset[str], int]:
    """The names in the heading a sentence opens with ("Elite" of "Elite membership:"): its
    capitalised, Hangul or code words. A heading starts with a letter or digit, so a
    bracketed label ("(meta data) TITLE:") is none. Also the number of tokens it holds."""
    colon = sentence.find(":")
    if colon < 0 or not sentence[:1].isalnum():
        return frozenset(), 0
    head = sentence[:colon]
    n = 0
    out: set[str] = set()
    pos = 0
    for t in tokens:
        k = sentence.find(t.text, pos)
        if k < 0 or k >= colon:
            break
        pos = k + len(t.text)
        n += 1
        if (not t.stop or acronym(t)) and (t.capital or t.hangul or t.kind == "code"):
            out.add(t.norm)
    if n == 0 or n > MAX_HEADING or not head.strip():
        return frozenset(), 0
    return frozenset(out), n


def _names(claim: Analysis) -> frozenset[str]:
    """The claim's capitalised stems (sentence-initial ones too: "Basic members ...")."""
    return claim.entities | claim.initial


def _modifier_names(text: Analysis) -> frozenset[str]:
    """Stems that surely name something: codes, capitalised words inside a sentence, and a
    capitalised first word directly before a content word ("Basic members", "Annual plans";
    not "Orders to", "Net of")."""
    out = set(text.codes) | set(text.entities)
    toks = text.tokens
    for k, t in enumerate(toks):
        first = k == 0 or text.sent_of[k - 1] != text.sent_of[k]
        if first and t.capital and (not t.stop or acronym(t)) and k + 1 < len(toks) \
                and not toks[k + 1].stop \
                and toks[k + 1].kind == "word" and text.sent_of[k + 1] == text.sent_of[k]:
            out.add(t.norm)
    return frozenset(out)


def _same_kind(a: Token, b: Token, a_name: bool, step: int) -> bool:
    """``a`` (the claim's word) and ``b`` (the premise's, in the same slot) name alternatives
    of one kind. ``step`` is +1 when the shared word follows them (they modify it)."""
    ca = closed_class(a)
    if ca is not None:
        return ca == closed_class(b)
    if a_name:
        return b.kind == "code" or (b.capital and not b.hangul)
    # Korean: a noun before the same head noun ("서울 리전" / "도쿄 리전").
    return a.hangul and b.hangul and step == 1 and len(a.norm) >= 2 and len(b.norm) >= 2


def _slot_words(claim: Analysis) -> list[tuple[int, Token, bool]]:
    """The claim's words that may be swapped (index, token, is a name): names, codes, Hangul
    nouns and closed-class words; the same against every premise, so found once per claim."""
    got = claim.memo.get("slot_words")
    if got is None:
        names = _names(claim)
        words: list[tuple[int, Token, bool]] = []
        for k, t in enumerate(claim.tokens):
            if t.stop or t.kind not in ("word", "code"):
                continue
            name = t.kind == "code" or t.norm in names
            if name or t.hangul or closed_class(t):
                words.append((k, t, name))
        claim.memo["slot_words"] = got = words
    return got  # type: ignore[return-value]


def slot_swap(prem: Analysis, claim: Analysis, on_topic: Sequence[bool]) -> bool:
    """Same-slot swap (see the module docstring). ``on_topic[s]``: premise sentence ``s``
    holds most of the claim's topic words."""
    ptoks = prem.tokens
    toks = claim.tokens
    for k, t, name in _slot_words(claim):
        if t.norm in prem.norms:
            continue
        for step in (1, -1):
            j = k + step
            # The shared word is a word or code: a number beside a name is usually across
            # punctuation the tokens do not keep ("2017, Richard" / "2017) - Canada").
            if not 0 <= j < len(toks) or toks[j].stop or toks[j].kind not in ("word", "code") \
                    or claim.sent_of[j] != claim.sent_of[k]:
                continue
            if toks[max(j, k)].punct:
                continue  # "2017, Richard": not one phrase
            anchor = toks[j].norm
            for pi in prem.where.get(anchor, ()):
                pj = pi - step
                if not 0 <= pj < len(ptoks):
                    continue
                s = prem.sent_of[pi]
                # The colon after a heading that names a sibling of the claim's entity (a word
                # of the claim besides the swapped one) joins it to what follows: "스탠드 조명
                # 블랙: 상품 코드" is "블랙의 상품 코드"; "자주 묻는 질문: 기록은" is no such phrase.
                if ptoks[max(pi, pj)].punct and not (
                        step == 1 and pi in prem.after_heading and prem.heads[s] & claim.norms):
                    continue
                other = ptoks[pj]
                if prem.sent_of[pj] != s or not on_topic[s] or other.stop \
                        or other.norm in claim.norms or other.norm == anchor:
                    continue
                if _same_kind(t, other, name, step):
                    return True
    return False


def colour_swap(prem: Analysis, claim: Analysis, on_topic: Sequence[bool]) -> bool:
    """The claim names a colour the premise never states, and a sentence that otherwise says
    the claim names another ("the blue Trail Runner 2" / "Trail Runner 2, red, size 42").
    Colours only: weekdays and months come in ranges ("Monday to Friday")."""
    colours = claim.memo.get("colours")
    if colours is None:
        claim.memo["colours"] = colours = frozenset(
            t.norm for t in claim.tokens if closed_class(t) == "colour")
    mine = colours - prem.norms  # type: ignore[operator]
    return bool(mine) and any(
        on_topic[prem.sent_of[i]] and closed_class(t) == "colour" and t.norm not in claim.norms
        for i, t in enumerate(prem.tokens))


def heading_swap(prem: Analysis, claim: Analysis, on_topic: Sequence[bool]) -> bool:
    """Heading swap (see the module docstring)."""
    heads = [head - claim.norms if on_topic[s] else frozenset()
             for s, head in enumerate(prem.heads)]
    if not any(heads):
        return False
    if _modifier_names(claim) - prem.norms:
        return True
    # Korean: the claim's topic ("부산 서면점은", "개발팀장은") holds a word the premise never
    # states, and the heading a word of the same kind, told by a shared ending: the
    # compound's head ("서면점" / "동성로점", "개발팀장" / "마케팅팀장").
    missing = [n for n in _ko_topic(claim) if n not in prem.norms]
    return any(len(a) >= 2 and len(b) >= 2 and a[-1] == b[-1] and a != b
               for a in missing for head in heads for b in head)


#: Particles that mark a Korean topic or subject: the phrase before them is what a claim is about.
_KO_TOPIC = ("은", "는", "이", "가")


def _ko_topic(claim: Analysis) -> list[str]:
    """Stems of the Hangul words up to the first topic or subject particle of the claim."""
    out: list[str] = []
    for t in claim.tokens:
        if not t.hangul or t.stop:
            if out:
                break
            continue
        out.append(t.norm)
        if t.text != t.norm and t.text[len(t.norm):] in _KO_TOPIC:
            return out
    return []
