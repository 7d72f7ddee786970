"""What makes a claim wrong: the distinguishing detail (module docstring of the package, 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...textkit.names import KO_SURNAMES, closed_class, ko_title
from ...textkit.quantity import FREE_WORDS, Quantity, free_at, no_limit
from ...textkit.spans import Text, is_content, spanned
from ...textkit.tokens import MONTHS, NEGATIONS, Token, answer_polarity
from .rules import on
from .tokens import stated

__all__ = ["FREE", "UNLIMITED", "Detail", "distinguishing_detail", "korean_name", "negated"]

#: Korean bound nouns and auxiliaries the shared stopword list (English) does not hold: they
#: say nothing about an entity, so they are never a detail ("할 수 있습니다", "동안").
_KO_FUNCTION = frozenset(["수", "있", "없", "것", "등", "및", "때", "동안", "중", "후", "전", "통해",
                          "대해", "경우", "이내", "까지", "부터", "하", "되", "드립", "가능"])

UNLIMITED = frozenset(["unlimit", "무제한"])
#: The detail "free", however it is said (``free_at``).
FREE = "=free"


@dataclass(frozen=True)
class Detail:
    """What makes a claim wrong: hard items (numbers with units, codes, months, names) and
    soft content words, none of which the reference or the question state."""

    quantities: tuple[Quantity, ...]
    names: frozenset[str]   # codes, months, capitalised words (stems)
    words: frozenset[str]   # other content stems
    anchor: frozenset[str]  # claim stems shared with the question/reference: what it is about
    topic: frozenset[str]   # the rest of the claim's content stems
    #: The claim's numbers the question/reference state too ("Toolkit 3.2", "the 13-inch"):
    #: part of what it is about, like ``anchor``.
    anchor_quantities: tuple[Quantity, ...] = ()
    #: The word before each of those ("Zone" of "Zone 2"), or "": what the number numbers.
    anchor_heads: tuple[str, ...] = ()
    #: The claim says "free" where the reference does not, beside a number that is the detail
    #: ("no monthly fee, and you can open it with just $25"): "free" is the detail when that
    #: number turns out to be the asked entity's own.
    free: bool = False

    @property
    def hard(self) -> bool:
        return bool(self.quantities or self.names)

    @property
    def specific(self) -> bool:
        """Unlikely to occur by chance: an amount with a unit ("23 kg", "12개월", "2 devices"), a
        number of three or more digits, a code, or a name of two words ("Rafael Quintero")."""
        return any(any(q.what) or abs(q.value) >= 100 for q in self.quantities) \
            or len(self.names) >= 2 \
            or any(any(ch.isdigit() for ch in n) for n in self.names)


def distinguishing_detail(claim: str, reference: str, question: str = "") -> Detail | None:
    """The claim's detail (see the module docstring), or None when it has none."""
    c, r, q = spanned(claim), spanned(reference), spanned(question)
    known = r.norms | q.norms
    given = r.quantities + q.quantities
    # "on a single charge", "one account": "one" counting a plain noun is an idiom more often
    # than a detail (not "one business day", whose unit is real; not "eight players"). A bare
    # number the reference says is stated ("two visitors" / "two at a time").
    bare = {t.norm for t in r.tokens if t.norm[:1].isdigit()}
    qty = tuple(x for x in c.quantities if not any(stated(x, y) for y in r.quantities)
                and not (c.tokens[x.pos].kind == "word" and x.counted
                         and x.value == 1)
                and not (x.counted and c.tokens[x.pos].norm in bare))
    known_qty = tuple(x for x in c.quantities if any(stated(x, y) for y in given))
    in_qty = set()
    for x in c.quantities:
        in_qty.add(x.pos)
        if any(x.what) and x.pos + 1 < len(c.tokens) and not c.tokens[x.pos + 1].stop:
            in_qty.add(x.pos + 1)  # the unit word ("day" of "90-day") belongs to the number
    names: set[str] = set()
    words: set[str] = set()
    # "Yes, the R3 has a mop" where the reference says it has none: what the reference denies
    # is the detail, though it states the words.
    answers = (answer_polarity(reference), answer_polarity(claim))
    yes_no = answers == (-1, 1)
    denied = (_denied(r) | _answered_no(r, q, c, answers)) \
        if not _negations(c) and on("denied") else frozenset()
    # What the claim is about (its first two words: "Classic 관리 콘솔에서도") is never denied.
    subject = {t.norm for t in [t for t in c.tokens if is_content(t)][:2]}
    # A leading answer word ("아니요, ...", "Yes, ...") says nothing about an entity.
    if c.tokens and c.tokens[0].text.lower() in _ANSWERS | _YES:
        in_qty.add(0)
    for i, t in enumerate(c.tokens):
        if t.stop or i in in_qty or t.kind == "num":
            continue
        if t.norm in known and not (t.norm in denied and t.norm not in subject):
            continue
        # "unlimited" is a value, like a number ("통화 무제한" against "통화 100분").
        if t.kind == "code" or t.text.lower() in MONTHS or (t.capital and i > 0) \
                or t.norm in UNLIMITED or i in c.quoted or korean_name(c, i):
            names.add(t.norm)
        elif t.kind == "word" and not (t.hangul and (len(t.norm) < 2 or t.norm in _KO_FUNCTION)):
            words.add(t.norm)
    names |= no_limit(c.tokens) - known
    # "free", said in any of its ways ("no extra charge" for "free of charge"), is a value,
    # the detail where there is no other number or name ("60 minutes without extra charges"
    # is about the minutes)
    free = on("free") and bool(free_at(c.tokens)) and not free_at(r.tokens) and not free_at(q.tokens)
    if free:
        words -= FREE_WORDS
        if not names and not any(x not in known_qty for x in qty):
            names.add(FREE)
    content = {t.norm for i, t in enumerate(c.tokens) if not t.stop and i not in in_qty}
    anchor = frozenset(content & known) - words
    topic = frozenset(content - anchor - names - words)
    qty = tuple(x for x in qty if x not in known_qty)  # a number the question asks about
    # One word is detail enough when it is a weekday, season or colour ("월요일" for "화요일").
    # A denied word is detail enough where a "Yes, ..." claim answers a "No, ..." reference.
    if not qty and not names and len(words) < (1 if yes_no and words else 2) \
            and not any(closed_class(t) and t.norm in words for t in c.tokens):
        return None
    heads = tuple(c.tokens[x.pos - 1].norm if x.pos > 0 and is_content(c.tokens[x.pos - 1]) else ""
                  for x in known_qty)
    return Detail(qty, frozenset(names), frozenset(words), anchor, topic, known_qty, heads,
                  free and FREE not in names)


def korean_name(t: Text, i: int) -> bool:
    """Token ``i`` is a Korean person's name: three syllables beginning with a family name,
    before a title ("박서연 교수님", "김지현 팀장") or with an honorific ("이도윤님")."""
    tok = t.tokens[i]
    if not tok.hangul or tok.text[0] not in KO_SURNAMES:
        return False
    if len(tok.norm) == 4 and tok.norm.endswith(("님", "씨")):
        return True
    nxt = t.tokens[i + 1] if i + 1 < len(t.tokens) else None
    return len(tok.norm) == 3 and nxt is not None and nxt.hangul and ko_title(nxt.text)


#: A leading answer word ("No, ...", "아니요, ...") is not the negation of what follows.
_ANSWERS = frozenset(["no", "nope", "아니요", "아니오", "아뇨"])
_YES = frozenset(["yes", "yeah", "네", "예"])
#: Endings that join two Korean clauses ("이용 가능하고 ...", "지원하며 ...").
_KO_AND = ("하고", "하며", "지만", "이며", "이고")
#: Particles that end a Korean topic or place phrase ("R3에는"): what follows is the predicate.
_KO_TOPIC_ENDS = ("에는", "에서는", "은", "는", "이", "가", "에")


def _negations(t: Text) -> list[int]:
    return [i for i, tok in enumerate(t.tokens)
            if tok.text.lower() in NEGATIONS
            and not (i == 0 and tok.text.lower() in _ANSWERS and len(t.tokens) > 1
                     and t.tokens[1].punct)]


def _denied(r: Text) -> frozenset[str]:
    """Stems the reference denies: in English those after its first negation ("does not
    include phone support"); in Korean those between the topic and it ("R3에는 물걸레 기능이
    없습니다")."""
    neg = _negations(r)
    if not neg:
        return frozenset()
    k = neg[0]
    if r.tokens[k].hangul:
        start = next((i + 1 for i in range(k) if r.tokens[i].hangul
                      and r.tokens[i].text.endswith(_KO_TOPIC_ENDS)), 0)
        return frozenset(t.norm for t in r.tokens[start:k] if not t.stop)
    return frozenset(t.norm for t in r.tokens[k + 1:] if not t.stop)


def _answered_no(r: Text, q: Text, c: Text, answers: tuple[int, int]) -> frozenset[str]:
    """What a "No, ..." reference denies of a yes/no question: the question's words it does
    not repeat ("Can the youth pass be used on regional trains?" / "No, on buses only"),
    less the claim's first two words (what it is about: "the youth pass", "유학생보험도").
    A "Yes, ..." claim is denied all it asserts of its subject ("Yes, Basic includes SAML
    SSO" / "No. Basic uses password login only; SAML SSO is on the Business tier").
    ``answers``: how the reference and the claim open (``answer_polarity``)."""
    if answers[0] != -1:
        return frozenset()
    subject = [t.norm for t in c.tokens if is_content(t) and t.text.lower() not in _YES][:2]
    if answers[1] == 1:
        # The reference's first clause restates the subject with the truth ("No. Basic uses
        # password login only; ..."): the claim's words past those are what it denies.
        end = next((i for i in range(2, len(r.tokens)) if r.tokens[i].punct
                    or r.tokens[i - 1].text.endswith(_KO_AND)),
                   len(r.tokens))
        first = r.tokens[1:end]
        return c.norms - {t.norm for t in first} - set(subject)
    return q.norms - r.norms - set(subject)


def negated(t: Text) -> bool:
    """The text denies something ("not", "없어", "미지원", "불가"), a leading "No," and a
    limit denied ("no limit", "제한 없이": the unlimited value) aside."""
    return denies(t.tokens)


def denies(toks: Sequence[Token]) -> bool:
    """``negated`` over tokens already read (a window's, out of its chunk's)."""
    for i, tok in enumerate(toks):
        if i == 0 and tok.text.lower() in _ANSWERS:
            continue
        if not (tok.text.lower() in NEGATIONS or (tok.hangul and tok.text.startswith(
                ("않", "없", "못", "불가", "미지원", "미제공")))):
            continue
        near = {toks[k].norm for k in (i - 1, i + 1) if 0 <= k < len(toks)}
        if not near & {"limit", "제한"}:
            return True
    return False
