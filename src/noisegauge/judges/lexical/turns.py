"""Claims of a chat's last answer made standalone with the turns before it (offline).

Two things are taken from the conversation, by rules, in English and Korean:

* the **slot** of an elliptical question: "And for monthly plans?" after "How long can annual
  plans be refunded?" is "How long can monthly plans be refunded?" ("월간 요금제는요?" after
  "연간 요금제는 며칠 안에 환불되나요?" likewise); the answer is then glued to that question
  as a bare answer always is, and carries the follow-up's subject, since the judge checks
  only the answer ("How long can monthly plans be refunded? Seven days for monthly plans.");
* the **entity** the last turns name ("the Starter plan", "스타터 요금제"), which replaces a
  leading pronoun ("it", "they", "그것", "그건") and phrases such as "the same plan",
  "this plan", "같은 요금제", "이 플랜" in a claim: "Yes, it includes 24/7 phone support."
  after a question about the Starter plan is "The Starter plan includes 24/7 phone support.".

A claim keeps the span of the response text it was made from. The turns are read for
meaning only: no claim is taken from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...textkit.tokens import answer_part
from .split import _AUX, _FILLER, ClaimSpan, extract_spans

if TYPE_CHECKING:
    from ...samples import Turn

__all__ = ["conversational_spans", "entity_of", "resolve_claim", "standalone_question"]

_HANGUL = re.compile(r"[\uac00-\ud7a3]")

# -- English -----------------------------------------------------------------------------

_EN_ELLIPSIS = re.compile(
    r"^(?:(?:and|but|so|ok|okay|also|then)\b[,]?\s*)?"
    r"(?P<lead>(?:what|how)\s+about\b|about\b|for\b|regarding\b|with\b|in\b|on\b|same\s+for\b)?\s*"
    r"(?P<x>[^?]+?)[\s?.!]*$", re.IGNORECASE)
_EN_CONNECTOR = re.compile(r"^(?:and|but|so|ok|okay|also|then)\b", re.IGNORECASE)
#: Words that open a question before its subject ("How long can", "Does", "What does").
_EN_QUESTION = frozenset(["how", "what", "which", "who", "whom", "whose", "when", "where", "why",
                          "long", "much", "many", "often", "soon", "far", "old", "and", "but",
                          "so", "also", "then", "please", "tell", "me", "about", "for", "the",
                          "a", "an", "any", "do", "does", "did", "is", "are", "was", "were",
                          "can", "could", "will", "would", "should", "may", "might", "must",
                          "has", "have", "had"])
_EN_STOP = frozenset(["the", "a", "an", "of", "to", "in", "on", "for", "with", "and", "or", "by",
                      "at", "from", "be", "not", "no", "yes", "i", "you", "we", "my", "your",
                      "our", "it", "they", "this", "that", "these", "those", "there", "if",
                      "than", "then", "how", "what", "when", "which", "who", "why", "where",
                      "get", "i'm", "me", "some", "many", "most", "all", "each", "every",
                      "first", "again", "else", "more", "anything", "something", "everything",
                      "nothing", "anyone", "someone", "everyone", "there", "here"])
_EN_PRONOUN = re.compile(
    r"^(?P<yes>(?:yes|yeah|yep|no|nope|sure|correct|right|indeed)\b[,.!]?\s+)?"
    r"(?P<p>it|they|its|their)\b(?!\s+(?:depends|seems|looks)\b)"
    # "It's hard to say", "it was clear that...": an "it" that stands for nothing
    r"(?!(?:\s*'s|\s+is|\s+was)\s+(?:\w+\s+){0,2}?(?:to|that|because|like)\b)", re.IGNORECASE)
_EN_ASKED_PRONOUN = re.compile(
    r"^(?P<q>(?:(?:and|so|but|what|how|does|do|did|is|are|was|were|can|could|will|would|"
    r"much|long|many|when|where|which)\s+){1,3})(?P<p>it|they|its|their)\b", re.IGNORECASE)
_EN_SAME = re.compile(r"\b(?P<det>the\s+same|this|that|these|those)\s+(?P<n>[a-z]+)\b",
                      re.IGNORECASE)

# -- Korean ------------------------------------------------------------------------------

_KO_CONNECTOR = re.compile(r"^(?:그럼|그러면|그렇다면|그리고|또|그럼요|혹시)\s*,?\s*")
_KO_ELLIPSIS = re.compile(r"^(?P<x>.+?)(?:은|는)(?:요)?\s*(?:어때요|어떤가요|어떻게\s*되나요|어떻습니까)?"
                          r"[\s?？.!]*$")
#: Particles and endings stripped from the end of a Korean phrase, longest first.
_KO_PARTICLES = ("에서는", "에게는", "으로는", "에서", "에게", "으로", "까지", "부터", "에는",
                 "은", "는", "이", "가", "을", "를", "에", "의", "도", "로", "와", "과", "만")
_KO_QUESTION = frozenset(["뭐", "무엇", "무슨", "어떤", "어떻게", "얼마", "얼마나", "며칠", "언제",
                          "어디", "왜", "누가", "몇"])
_KO_PRONOUN = re.compile(r"^(?P<yes>(?:네|예|아니요|아뇨|맞아요|맞습니다)[,.!]?\s+)?"
                         r"(?P<p>그것|그거|이것|이거)(?P<j>은|는|이|가|을|를|도|의)?(?=\s)")
_KO_CONTRACT = re.compile(r"^(?P<yes>(?:네|예|아니요|아뇨)[,.!]?\s+)?(?P<p>그건|그게|이건|이게)(?=\s)")
_KO_SAME = re.compile(r"(?P<det>그|이|저|같은|동일한|해당)\s+(?P<n>[\uac00-\ud7a3]+?)"
                      r"(?P<j>은|는|이|가|을|를|도|의|에|에서|으로|로)?(?=[\s.,!?]|$)")
#: A short Korean answer that only states a value ("7일이에요.", "월 9,900원입니다.").
_KO_VALUE = re.compile(r"^\S+(?:\s\S+)?\s*(?:이에요|예요|입니다|이요|요|이다)[.!]?$")
#: Generic heads a demonstrative may point with ("이 플랜" for "스타터 요금제").
_KO_GENERIC = frozenset(["요금제", "플랜", "상품", "제품", "서비스", "옵션", "계정", "구독", "멤버십", "등급"])
_EN_GENERIC = frozenset(["plan", "plans", "tier", "tiers", "one", "ones", "option", "package",
                         "product", "subscription", "account", "service", "membership"])


def _korean(text: str) -> bool:
    return bool(_HANGUL.search(text))


def _final_consonant(word: str) -> bool:
    """Whether the last syllable of ``word`` has a final consonant (batchim); a word that
    does not end in Hangul counts as ending in one unless it ends in a vowel letter."""
    ch = word[-1:]
    if "\uac00" <= ch <= "\ud7a3":
        return (ord(ch) - 0xAC00) % 28 != 0
    return ch.lower() not in "aeiouy"


_JOSA = {"은": ("은", "는"), "는": ("은", "는"), "이": ("이", "가"), "가": ("이", "가"),
         "을": ("을", "를"), "를": ("을", "를"), "과": ("과", "와"), "와": ("과", "와"),
         "으로": ("으로", "로"), "로": ("으로", "로")}


def _josa(word: str, particle: str) -> str:
    pair = _JOSA.get(particle)
    if pair is None:
        return particle
    return pair[0] if _final_consonant(word) else pair[1]


def _ko_stem(word: str) -> tuple[str, str]:
    """``word`` without its trailing particle, and the particle."""
    core = word.rstrip("?？.!,")
    for p in _KO_PARTICLES:
        if core.endswith(p) and len(core) > len(p):
            return core[: -len(p)], p
    return core, ""


def _ko_modifier(word: str) -> bool:
    """A Korean noun standing bare before the next one ("연간 요금제"): no particle, and not
    a question word; "프로" is a word, not "프" + "로" (a one-syllable stem is not taken)."""
    stem, particle = _ko_stem(word)
    return bool(_HANGUL.search(word)) and (particle == "" or len(stem) < 2) \
        and word not in _KO_QUESTION


def _singular(word: str) -> str:
    word = word.lower().strip(".,?!;:\"'")
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


# -- the slot of an elliptical question ----------------------------------------------------

def _ellipsis(question: str) -> str | None:
    """What an elliptical follow-up asks about ("And for monthly plans?" -> "monthly
    plans"; "월간 요금제는요?" -> "월간 요금제"), or None for a question of its own."""
    q = " ".join(question.split())
    if _korean(q):
        body = _KO_CONNECTOR.sub("", q)
        m = _KO_ELLIPSIS.match(body)
        if m is None or len(m.group("x").split()) > 3 or any(
                w in _KO_QUESTION for w in m.group("x").split()):
            return None
        return m.group("x").strip()
    m = _EN_ELLIPSIS.match(q)
    if m is None:
        return None
    x = m.group("x").strip()
    words = x.split()
    marked = bool(m.group("lead")) or bool(_EN_CONNECTOR.match(q))
    if not words or len(words) > 6 or not marked or any(w.lower() in _AUX for w in words) \
            or words[0].lower() in _EN_QUESTION - {"the", "a", "an", "any"}:
        return None
    if words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words) or None


def _replace_slot(previous: str, new: str) -> str | None:
    """``previous`` with the phrase in the slot of ``new`` replaced by it: the words before
    the same head noun ("annual plans" -> "monthly plans"), else the first name inside the
    sentence ("Starter" -> "Business"); None when there is no such slot."""
    words = previous.split()
    new_words = new.split()
    if _korean(previous):
        head = _ko_stem(new_words[-1])[0]
        for h, w in enumerate(words):
            stem, particle = _ko_stem(w)
            if stem == head:
                m = h
                while m > 0 and _ko_modifier(words[m - 1]) and len(new_words) > 1:
                    m -= 1
                if len(new_words) == 1 and m == h:
                    # "월간은요?": the bare noun modifying the head ("연간 요금제" -> "월간 요금제")
                    break
                return " ".join([*words[:m], *new_words[:-1], new_words[-1] + particle, *words[h + 1:]])
        if len(new_words) == 1:
            for k in range(len(words) - 1):
                if _ko_modifier(words[k]) and _HANGUL.search(words[k + 1]):
                    return " ".join([*words[:k], new_words[0], *words[k + 1:]])
        return None
    head = _singular(new_words[-1])
    for h, w in enumerate(words):
        if _singular(w) == head and h > 0:
            m = h
            while m > 0 and words[m - 1].lower() not in _EN_STOP | _AUX | _EN_QUESTION:
                m -= 1
            tail = w[len(w.rstrip(".,?!;:")):]
            return " ".join([*words[:m], *new_words[:-1], new_words[-1] + tail, *words[h + 1:]])
    if len(new_words) <= 2 and new_words[0][:1].isupper():
        for k in range(1, len(words)):
            if words[k][:1].isupper():
                end = k
                while end + 1 < len(words) and words[end + 1][:1].isupper():
                    end += 1
                tail = words[end][len(words[end].rstrip(".,?!;:")):]
                return " ".join([*words[:k], *new_words[:-1], new_words[-1] + tail,
                                 *words[end + 1:]])
    return None


# -- the entity the turns name -------------------------------------------------------------

_EN_NAMED = re.compile(
    r"\b(?P<det>[Tt]he\s+)?(?P<name>(?:[A-Z][\w'+-]*|(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]+)"
    r"(?:\s+[A-Z][\w'+-]*)*)"
    r"(?:\s+(?!(?:the|a|an|of|to|for|in|on|and|or|it|they)\b)(?P<head>[a-z][a-z-]+))?")


def named_entity(text: str) -> str | None:
    """The first name inside the first sentence, with its head noun ("Can I cancel the Pro
    plan anytime?" -> "the Pro plan"); a sentence's first word counts only when a head noun
    follows it ("Annual plans ..."), never a question word or pronoun."""
    first = next((s for s in re.split(r"(?<=[.?!？])\s+", " ".join(text.split())) if s), "")
    for m in _EN_NAMED.finditer(first):
        name, head = m.group("name"), m.group("head")
        if head is not None and (head in _AUX or head in _EN_STOP or head.endswith("ed")):
            head = None
        initial = m.start("name") == 0
        # A sentence's capitalised first word is a name only before a noun such as "plans"
        # ("Annual plans ..."), not before any word ("Maybe so", "People love").
        if name.split()[0].lower() in _EN_QUESTION | _EN_STOP | _FILLER | {"i"} \
                or name.lower().startswith(("i'", "i’")) \
                or (initial and (head is None or head not in _EN_GENERIC)):
            continue
        det = (m.group("det") or "").lower()
        return f"{det}{name}{' ' + head if head else ''}"
    return None


def entity_of(text: str) -> str | None:
    """The thing a question or sentence is about: its subject noun phrase ("How long can
    annual plans be refunded?" -> "annual plans"; "스타터 요금제에 ...?" -> "스타터 요금제")."""
    first = next((s for s in re.split(r"(?<=[.?!？])\s+", " ".join(text.split())) if s), "")
    if not first:
        return None
    words = first.split()
    if _korean(first):
        words = _KO_CONNECTOR.sub("", first).split()
        out: list[str] = []
        for w in words[:4]:
            if not _HANGUL.search(w) and not w[:1].isalpha():
                break
            stem, particle = _ko_stem(w)
            if len(stem) < 2 and particle:  # "프로" is a word, not "프" + "로"
                stem, particle = w.rstrip("?？.!,"), ""
            if stem in _KO_QUESTION or stem in _FILLER or stem in ("그것", "그거", "이것", "그", "이"):
                return None
            out.append(stem)
            if particle:
                break
        else:
            return None
        return " ".join(out) if out and len(out) <= 3 else None
    if words[0].lower() in ("who", "whom", "whose") or (
            words[0].lower() in ("what", "which") and len(words) > 1
            and words[1].lower() not in _AUX):
        # "Who did the cinematography?": what follows is the object; "What year was...?":
        # the noun is what is asked, not what the answer is about
        return None
    k = 0
    det = ""
    while k < len(words) and words[k].lower().strip(",") in _EN_QUESTION:
        if words[k].lower() == "the":
            det = "the "
        k += 1
    out = []
    while k < len(words) and len(out) < 5:
        w = words[k].strip(",.?!;:\"'")
        if not w or w.lower() in _AUX or w.lower() in _EN_STOP \
                or (w.lower().endswith("ed") and out):
            break
        out.append(w)
        k += 1
    if k >= len(words) and len(out) > 1 and words[0].lower() in ("do", "does", "did"):
        out.pop()  # "Do gift cards expire?": the last word is the verb
    # Only a question's subject (a statement's first words in chat are as often "yep doing
    # good"), and never an interjection or a pronoun.
    if not out or not first.rstrip().endswith("?") or any(w.lower() in _FILLER for w in out) \
            or out[0].lower() in ("it", "they", "this", "that", "he", "she", "i", "you", "we"):
        return None
    return det + " ".join(out)


#: Earlier turns read for the entity a pronoun stands for: the last exchange and the user
#: turn before it (a pronoun seldom reaches further back, and a wrong entity is worse than none).
ENTITY_TURNS = 3


def _entities(question: str, history: Sequence[Turn]) -> list[str]:
    """The entities of the (standalone) question and of the last earlier turns, nearest
    first; in English the named ones ("the Pro plan") before the plain subjects ("seats")."""
    turns = [t.content for t in history if t.role != "system"][-ENTITY_TURNS:]
    texts = [question, *reversed(turns)]
    found = [named_entity(t) for t in texts if not _korean(t)]
    found += [entity_of(t) for t in texts]
    return list(dict.fromkeys(e for e in found if e))


def _pick(entities: Sequence[str], noun: str | None) -> str | None:
    """The nearest entity; for "the same plan" / "그 요금제" the nearest whose head is that
    noun, else (a generic noun: "this one", "이 상품") the nearest."""
    if noun is None:
        return entities[0] if entities else None
    korean = _korean(noun)
    for e in entities:
        if (noun in e.split()) if korean else (_singular(noun) in {_singular(w) for w in e.split()}):
            return e
    generic = _KO_GENERIC if korean else _EN_GENERIC
    return entities[0] if entities and noun.lower() in generic else None


def _plural(entity: str) -> bool:
    last = entity.split()[-1]
    return last.islower() and last.endswith("s") and not last.endswith("ss")


def _capital(entity: str) -> str:
    return entity[:1].upper() + entity[1:]


def resolve_claim(claim: str, entities: Sequence[str]) -> str:
    """``claim`` with a leading pronoun and "the same <head>" replaced by the entity the
    conversation names (``entities``, nearest first)."""
    if not entities:
        return claim
    if _korean(claim):
        m = _KO_PRONOUN.match(claim) or _KO_CONTRACT.match(claim)
        if m is not None:
            entity = entities[0]
            particle = m.groupdict().get("j") or {"그건": "은", "이건": "은", "그게": "이",
                                                   "이게": "이"}.get(m.group("p"), "")
            return entity + _josa(entity, particle) + claim[m.end():]
        m = _KO_SAME.search(claim)
        picked = _pick(entities, m.group("n")) if m is not None else None
        if m is not None and picked is not None and picked not in claim:
            yes = re.match(r"^(?:네|예|아니요|아뇨)[,.!]?\s+", claim)
            # "네, 그 요금제는 ...": the yes goes with the pronoun it answered for
            start = yes.end() if yes is not None and yes.end() == m.start() else 0
            return claim[start:m.start()] + picked + _josa(picked, m.group("j") or "") \
                + claim[m.end():]
        return _ko_topic(claim, entities[0])
    m = _EN_PRONOUN.match(claim)
    if m is not None and len([w for w in re.findall(r"[\w'-]+", claim[m.end():].lower())
                              if w not in _EN_STOP and w not in _AUX and w not in _FILLER
                              and w not in ("'s", "certainly", "really", "very", "definitely",
                                            "indeed", "absolutely", "still")]) < 1:
        return claim  # "Yes it was.", "It certainly is.": an echo that says nothing of its own
    if m is not None and m.group("p").lower() in ("it", "its"):
        # "it" is not a plural common noun ("the main actors")
        entities = [e for e in entities if not _plural(e)]
    if m is not None and entities:
        entity = entities[0]
        if entity.lower() in claim.lower():
            return claim
        possessive = m.group("p").lower() in ("its", "their")
        rest = claim[m.end():]
        if rest[:2] in ("'s", "’s") and not possessive:
            rest = " is" + rest[2:]  # "it's" is "it is"
        return _capital(entity) + ("'s" if possessive else "") + rest
    m = _EN_SAME.search(claim)
    if m is not None and not m.group("det").lower().startswith("the") and re.match(
            r"^(?:(?:yes|yeah|no|sure)\b[,.!]?\s+)?$", claim[:m.start()], re.IGNORECASE) is None:
        m = None  # "this one" inside a sentence is as often deictic: only "the same X" there
    picked = _pick(entities, m.group("n")) if m is not None else None
    if m is not None and picked is not None and picked.lower() not in claim.lower():
        entity = picked
        lead = re.match(r"^(?:yes|yeah|no|sure)\b[,.!]?\s+", claim, re.IGNORECASE)
        start = lead.end() if lead is not None and lead.end() == m.start() else 0
        new = entity if m.start() > start else _capital(entity)
        return claim[start:m.start()] + new + claim[m.end():]
    return claim


#: A Korean phrase that already names what a sentence is about (a topic or subject).
_KO_HAS_TOPIC = re.compile(r"[\uac00-\ud7a3A-Za-z0-9](?:은|는|이|가|께서)(?=\s)")


def _ko_topic(claim: str, entity: str) -> str:
    """A Korean sentence without a topic or subject ("7일 안에 환불됩니다.", the subject
    dropped as Korean does) gets the entity as its topic; a "question? answer" claim or one
    that names the entity is left alone."""
    body = claim.rpartition("? ")[2]
    if "? " in claim or entity in claim or _KO_HAS_TOPIC.search(body) or len(body.split()) < 2:
        return claim
    yes = re.match(r"^(?:네|예|아니요|아뇨)[,.!]?\s+", claim)
    start = yes.end() if yes is not None else 0
    return entity + _josa(entity, "은") + " " + claim[start:]


def standalone_question(question: str | None, history: Sequence[Turn]) -> str | None:
    """``question`` made standalone: an elliptical follow-up takes the slot of the last full
    user question before it, and a leading pronoun the entity the turns name."""
    return _standalone(question, history)[0]


def _standalone(question: str | None, history: Sequence[Turn]) -> tuple[str | None, str | None]:
    """The standalone question and its **subject**: what the follow-up asks about that only
    the conversation makes a question of ("monthly plans" in "And for monthly plans?", the
    Starter plan for "it"); None for a question that stands on its own."""
    if not question or not history:
        return question, None
    previous: str | None = None
    for turn in history:  # earlier follow-ups resolve against the questions before them
        if turn.role == "user":
            previous = _follow_up(turn.content, previous, history)[0]
    return _follow_up(question, previous, history)


def _follow_up(question: str, previous: str | None,
               history: Sequence[Turn]) -> tuple[str, str | None]:
    x = _ellipsis(question)
    if x is not None and previous:
        replaced = _replace_slot(previous, x)
        return (question, None) if replaced is None else (replaced, _subject_as_asked(question, x))
    if x is None and previous:
        entities = _entities(previous, history)
        m = _EN_ASKED_PRONOUN.match(question)
        if m is not None and entities and not _korean(question):
            # "Does it include SSO?" -> "Does the Starter plan include SSO?"
            possessive = m.group("p").lower() in ("its", "their")
            return (m.group("q") + entities[0] + ("'s" if possessive else "")
                    + question[m.end():], entities[0])
        resolved = resolve_claim(question, entities)
        if resolved != question:
            named = [e for e in entities if e.lower() in resolved.lower()
                     and e.lower() not in question.lower()]
            return resolved, named[0] if named else None
    return question, None


def _subject_as_asked(question: str, x: str) -> str:
    """The ellipsis's phrase with the article the question gave it ("the Team plan")."""
    m = re.search(r"\b(?:the|a|an)\s+" + re.escape(x), question, re.IGNORECASE)
    return m.group(0).split(None, 1)[0].lower() + " " + x if m is not None else x


def conversational_spans(text: str, question: str | None,
                         history: Sequence[Turn]) -> list[ClaimSpan]:
    """Claims of ``text`` (with their spans) made standalone with ``history``."""
    asked, subject = _standalone(question, history)
    spans = extract_spans(text, asked)
    if asked and len(spans) == 1 and "? " not in spans[0].text and _KO_VALUE.match(spans[0].text) \
            and _korean(asked):
        # "7일이에요.": a Korean value answer is as bare as "Seven days." for its question.
        only = spans[0]
        spans = [ClaimSpan(f"{asked.rstrip(' ?？')}? {only.text}", only.start, only.end)]
    entities = _entities(asked or "", history)
    claims = [ClaimSpan(_resolve_glued(c.text, entities), c.start, c.end) for c in spans]
    if subject is not None and asked and len(claims) == 1:
        claims = [ClaimSpan(_with_subject(claims[0].text, asked, subject), claims[0].start,
                            claims[0].end)]
    return claims


def _resolve_glued(claim: str, entities: Sequence[str]) -> str:
    """``resolve_claim``; for a "question? answer" claim, on its answer: that part is what
    the judge checks ("Do gift cards expire? They expire..." -> "... Gift cards expire...")."""
    head, sep, answer = claim.rpartition("? ")
    if sep and head:
        resolved = resolve_claim(answer, entities)
        return f"{head}? {resolved}" if resolved != answer else claim
    return resolve_claim(claim, entities)


def _with_subject(claim: str, asked: str, subject: str) -> str:
    """A bare answer glued to its follow-up question ("How long can monthly plans be
    refunded? Seven days.") with the follow-up's subject in its answer ("Seven days for
    monthly plans.", "월간 요금제는 7일이에요."). The judge checks the answer only (the
    question is context), so without it "Seven days" would be supported by any chunk that
    says seven days, the annual plans' included: the subject is what the answer is about."""
    head, sep, answer = claim.rpartition("? ")
    glued = head in (" ".join(asked.split()).rstrip(" ?.!\"'”’"), asked.rstrip(" ?？"))
    if not sep or not glued or answer_part(claim) != answer or _names(answer, subject):
        return claim  # not a bare answer, one with no content ("Yes."), or one naming it
    if _korean(answer):
        yes = re.match(r"^(?:네|예|아니요|아뇨)[,.!]?\s+", answer)
        start = yes.end() if yes is not None else 0
        return f"{head}? {subject}{_josa(subject, '은')} {answer[start:]}"
    body = answer.rstrip()
    stop = body[-1] if body[-1:] in ".!" else "."
    return f"{head}? {body.rstrip('.!')} for {subject}{stop}"


def _names(text: str, subject: str) -> bool:
    """Whether ``text`` already names ``subject`` (each of its content words)."""
    if _korean(subject):
        return all(w in text for w in subject.split())
    said = {_singular(w) for w in text.split()}
    return all(_singular(w) in said for w in subject.split()
               if w.lower() not in _EN_STOP)
