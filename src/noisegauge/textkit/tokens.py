"""Tokens for lexical entailment: normalised content words, quantities, negation, entities.

English words are lower-cased and Snowball-stemmed; Hangul words lose their trailing
particles and copula/verb endings (플랜은 / 플랜의 / 플랜을 -> 플랜), so both languages
compare on stems. Numbers are parsed into values with the unit that follows or precedes
them (``30-day`` -> 30 day, ``$49.99`` -> 49.99 usd, ``v2.3`` -> 2.3 version).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import snowballstemmer  # type: ignore[import-untyped]

from .sentences import STOPWORDS, sentence_spans

__all__ = [
    "KO_STOP",
    "MONTHS",
    "NEGATIONS",
    "QUOTED",
    "STOPWORDS",
    "SYNONYMS",
    "Token",
    "answer_part",
    "answer_polarity",
    "is_hangul",
    "stem",
    "tokenize",
    "tokenize_by_sentence",
]

_STEMMER = snowballstemmer.stemmer("english")

# Word, version, number (with thousands separators and decimals), currency sign, percent.
_TOKEN = re.compile(
    # Product codes and identifiers: hyphenated upper-case (NG-TM-M) or upper-case with digits
    # (H200, COVID-19). Compared whole, like numbers: one wrong letter is another product.
    # A code may carry a Korean particle ("LMP-100-BK입니다"): it ends at the next character
    # that is no ASCII letter, digit or hyphen, not at a word boundary. Lower-case identifiers
    # of three or more parts with a numeric one ("eu-west-1") are codes too.
    r"(?P<code>\b[A-Z0-9]*[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![A-Za-z0-9_-])"
    r"|\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*[0-9])[A-Z0-9]{2,}(?![A-Za-z0-9_-])"
    r"|\b(?=[a-z0-9-]*-[0-9]+(?:-|\b))[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}\b(?!-))"
    r"|(?P<ver>\bv\d+(?:\.\d+)+\b|\bv\d+\b)"
    r"|(?P<ord>\d+(?:st|nd|rd|th)\b)"
    r"|(?P<clock>(?<![\d:])(?:[01]?\d|2[0-4]):[0-5]\d(?![\d:]))"
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
    r"|(?P<ko>[\uac00-\ud7a3]+)"
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)"
    r"|(?P<sym>[$€£¥₩%])",
    re.UNICODE,
)


# A small closed list of support-domain synonyms, as stems: the left one is read as the right one.
SYNONYMS = {
    "seat": "user", "member": "user", "termin": "cancel", "reimburs": "refund",
    "permit": "allow", "let": "allow", "purchas": "buy", "select": "choos", "pick": "choos",
    "begin": "start", "commenc": "start", "finish": "end", "receiv": "get", "obtain": "get",
    "need": "requir", "price": "cost", "assist": "help", "deliveri": "ship",
    "deliv": "ship", "larg": "big", "small": "littl", "quick": "fast", "rapid": "fast",
    "automobil": "car", "film": "movi", "kid": "child", "children": "child",
    "talk": "speak", "spoke": "speak", "spoken": "speak", "initi": "start",
    # Size words read as one ("a vast/huge/substantial portfolio" is a large one).
    "vast": "larg", "huge": "larg", "substanti": "larg", "massiv": "larg", "enorm": "larg",
    "sizabl": "larg", "immens": "larg", "tini": "littl",
    # Agent nouns read as their verb ("investor" invests, "manager" manages).
    "investor": "invest", "founder": "found", "owner": "own", "employe": "employ",
}

#: Phrasal verbs read as the single verb they mean ("goes back to" is "returns to").
_PHRASAL = re.compile(r"\b(?:go|goes|went|gone|going|come|comes|came|coming|send|sends|sent|"
                      r"sending|give|gives|gave|given|giving)\s+back\b", re.IGNORECASE)

# Cues that flip a clause's polarity (English and Korean forms).
NEGATIONS = frozenset(["not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "can't", "won't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "shouldn't", "wouldn't", "couldn't", "mustn't", "without", "unable", "fail", "fails", "failed", "lack", "lacks", "lacked", "않", "않는", "않다", "않습니다", "않아요", "않은", "않고", "없", "없다", "없는", "없습니다", "없어요", "없이", "못", "못한", "안", "아니", "아닌", "아니다", "아닙니다"])

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "dozen": 12, "twice": 2, "half": 0.5, "single": 1, "double": 2,
}
# A short quoted name: 'Premium', “Nova”, '하랑'이, 「솔」; not an apostrophe ("Smith's").
QUOTED = re.compile("(?:(?<=\\s)|(?<=^)|(?<=[(\\[]))['\u2018\u201c\"\u300c\u300e]"
                     "([^'\u2019\u201d\"\u300d\u300f\\n]{1,30})['\u2019\u201d\"\u300d\u300f]"
                     "(?=[\\s.,;:!?)\\]]|[\uac00-\ud7a3]|$)")

# "Yes," / "No." / "네," / "아니요." opening an answer; not "No fee is charged", "Yes-man" or
# "네 가지" (four kinds).
_YES_NO = re.compile(r"\s*(?:(yes|yeah|yep)|(no|nope))\s*[,.!;:\u2014\u2013]|\s*(?:(네|예)|(아니요|아니오|아뇨))\s*[,.!]",
                     re.IGNORECASE)


def answer_part(claim: str) -> str:
    """The checkable part of a "question? answer" claim (as the lexical judge's ``extract``
    builds for bare answers): the answer, unless it has no content of its own ("yes", "no")."""
    head, sep, tail = claim.rpartition("? ")
    if sep and head and any(not t.stop for a, b in sentence_spans(tail) or [(0, len(tail))]
                            for t in tokenize(tail[a:b])):
        return tail
    return claim


def answer_polarity(text: str) -> int:
    """+1 / -1 when the text opens by answering yes / no ("No. Basic uses password login"),
    else 0."""
    m = _YES_NO.match(text)
    if m is None:
        return 0
    return 1 if m.group(1) or m.group(3) else -1


MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"])}
MONTHS.update({m[:3]: v for m, v in list(MONTHS.items())})
MONTHS.pop("may", None)  # "may" is usually the modal verb; only the long form counts when unambiguous

# Hangul particles and endings, longest first, stripped from the end of an eojeol.
_KO_SUFFIXES = sorted(["은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "께", "께서", "한테", "으로", "로", "와", "과", "도", "만", "까지", "부터", "마다", "보다", "처럼", "이나", "나", "랑", "이랑", "으로는", "에서는", "에는", "로는", "과는", "와는", "이라", "이라는", "라는", "이며", "이고", "이다", "입니다", "이에요", "예요", "에요", "였다", "이었다", "했습니다", "했으며", "했고", "했어요", "했던", "합니다", "한다", "했다", "해요", "하고", "하며", "하는", "하여", "해서", "할", "한", "하다", "됩니다", "된다", "되는", "된", "되며", "되고", "됐다", "습니다", "니다", "하지", "하기", "하면", "해야", "해도", "아도", "어도", "하려면", "으려면", "려면", "있다", "있습니다", "있는", "있고", "있으며", "있어요", "적", "들", "들은", "들이", "들을", "들의"], key=len, reverse=True)

_KO_SUFFIX_SET = frozenset(_KO_SUFFIXES)

#: Korean function words (stems): bound nouns, auxiliaries and postposition-like nouns that
#: carry no content of their own ("할 수 있습니다", "시작할 때", "14일 동안").
KO_STOP = frozenset(["수", "있", "것", "때", "등", "및", "동안", "중", "경우", "위해", "대해", "통해",
                     "따라", "관련", "하", "되", "됩", "합", "드립", "주세요", "해주세요", "또는", "그리고",
                     "또한", "모든", "각", "이", "그", "저", "더", "좀", "잘"])

_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def is_hangul(text: str) -> bool:
    return bool(_HANGUL.search(text))


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Normalised form of one word: lower-case English stem, or Hangul stem without particles."""
    w = word.lower().replace("’", "'")
    w = w.removesuffix("'s")
    if is_hangul(w):
        return _ko_stem(w)
    if w in _NUMBER_WORDS and _NUMBER_WORDS[w] >= 2:
        return _num_norm(_NUMBER_WORDS[w])  # "five" and "5" compare equal ("one" is a pronoun)
    s = str(_STEMMER.stemWord(w.replace("'", "")))
    return SYNONYMS.get(s, s)


#: A copula after a particle ("15일까지입니다": "15일" + "까지" + "입니다"): both come off.
_KO_COPULAS = frozenset(["입니다", "이다", "이며", "이고", "이에요", "예요", "에요", "였다", "이었다"])
_KO_BEFORE_COPULA = ("까지", "부터")


#: Nouns that end like the adnominal "한" ("중요한"): "제한" (limit) is not "제" + "한".
_KO_HAN_NOUNS = frozenset(["제한", "무제한", "기한", "권한", "상한", "하한", "최대한", "최소한"])


@lru_cache(maxsize=100_000)
def _ko_stem(w: str) -> str:
    if w in _KO_HAN_NOUNS:
        return w
    for suf in _KO_SUFFIXES:
        if len(w) > len(suf) and w.endswith(suf):
            base = w[: -len(suf)]
            if suf in _KO_COPULAS:
                for inner in _KO_BEFORE_COPULA:
                    if len(base) > len(inner) and base.endswith(inner):
                        return base[: -len(inner)]
            return base
    return w


class Token(NamedTuple):
    """One token. A named tuple, not a dataclass: texts hold thousands and building them is
    a third of the lexical judge's time."""

    text: str
    norm: str        # stem, or canonical number string
    kind: str        # "word" | "num" | "sym" ("ko" for Hangul words, which are words too)
    capital: bool    # starts with an upper-case letter (not sentence-initial is decided later)
    stop: bool
    hangul: bool = False
    #: Punctuation stands between this token and the one before ("Kent, England"): the two
    #: are not one phrase, whatever their order.
    punct: bool = False


def _num_norm(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _parse_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


#: Tokens already built, by kind and text, each with and without punctuation before it: a
#: token is a function of the two, and most words recur, so building one is a dict lookup.
_BUILT: dict[str, dict[str, tuple[Token, Token]]] = {}
_BUILT_MAX = 200_000


def _build(kind: str, t: str) -> tuple[Token, Token]:
    if kind == "word":
        low = t.lower()
        tok = Token(t, stem(t), "word", t[:1].isupper(), low in STOPWORDS or len(low) == 1)
    elif kind == "num":
        v = None if t.count(".") > 1 else _parse_number(t)  # 1.2.3: version-like, kept as text
        tok = Token(t, _num_norm(v) if v is not None else t, "num", False, False)
    elif kind == "ko":
        norm = _ko_stem(t)
        # A particle or ending on its own ("입니다" after "LMP-100-BK") is a function word.
        tok = Token(t, norm, "word", False, norm in KO_STOP or t in _KO_SUFFIX_SET, True)
    elif kind == "code":
        tok = Token(t, t.upper(), "code", True, False)
    elif kind == "ver":
        tok = Token(t, "v" + t[1:].lower(), "num", False, False)
    elif kind == "ord":  # 9th, 21st: a word (quantities() reads it as an ordinal)
        tok = Token(t, t.lower(), "word", False, False)
    elif kind == "clock":  # 18:00, a time of day (quantities() reads it)
        tok = Token(t, t, "num", False, False)
    else:
        tok = Token(t, t, "sym", False, True)
    built = (tok, tok._replace(punct=True))
    cache = _BUILT.setdefault(kind, {})
    if len(cache) >= _BUILT_MAX:
        cache.clear()
    cache[t] = built
    return built


@lru_cache(maxsize=50_000)
def tokenize(text: str) -> tuple[Token, ...]:
    """All tokens of ``text`` in order (words, numbers, versions and unit symbols)."""
    out: list[Token] = []
    append = out.append
    if "back" in text.lower():  # (the only word every phrasal verb has: most texts skip it)
        text = _PHRASAL.sub("return", text)
    prev = 0
    built = _BUILT
    for m in _TOKEN.finditer(text):
        t = m.group()
        start, end = m.span()
        kind = m.lastgroup or "sym"
        pair = built.get(kind, {}).get(t) or _build(kind, t)
        # punctuation between this token and the one before ("Kent, England"); most tokens
        # follow one space, which is read without slicing
        append(pair[0] if start == prev or not out or (start == prev + 1 and text[prev] == " ")
               or text[prev:start].isspace() else pair[1])
        prev = end
    return tuple(out)


def tokenize_by_sentence(text: str) -> tuple[Token, ...]:
    """``tokenize(text)``, read sentence by sentence: the same tokens (a token never crosses a
    sentence boundary; the first of each sentence gets back the punctuation flag the sentence
    before gives it), but each sentence's come from the cache the lexical judge fills."""
    spans = sentence_spans(text)
    if len(spans) < 2 or "back" in text.lower():  # (a phrasal verb shifts the offsets)
        return tokenize(text)
    out: list[Token] = []
    prev = 0  # end of the last token so far
    for a, b in spans:
        toks = tokenize(text[a:b])
        if toks and out:
            first = toks[0]
            start = text.find(first.text, a)
            punct = start > prev and not text[prev:start].isspace()
            if punct != first.punct:
                toks = (first._replace(punct=punct), *toks[1:])
        if toks:
            last = toks[-1]
            k = text.rfind(last.text, a, b)
            prev = k + len(last.text) if k >= 0 else b
        out.extend(toks)
    return tuple(out)
