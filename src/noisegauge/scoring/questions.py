"""Questions a response answers, written by rules: the offline judges' side of Answer Relevancy.

An LLM judge writes the questions in its extraction call; judges that cannot write
(lexical, NLI, fake, precomputed) get these templates over the response's claims instead:
each claim becomes the question it answers, keeping its content words, which is what the
embedding comparison reads.

- English: an auxiliary or copula moves to the front ("The Pro plan can be cancelled
  anytime" -> "Can the Pro plan be cancelled anytime?"); a third-person verb gets "does"
  ("The Dock ships in 3 days" -> "Does the Dock ship in 3 days?"); anything else becomes
  "Is it true that ...?".
- Korean: the declarative ending becomes its interrogative ("…합니다." -> "…합니까?",
  "…이다." -> "…인가?", polite "…요." -> "…요?").

A response is non-committal when it declines (the lexical judge's refusal patterns, en+ko):
it then answers nothing and Answer Relevancy is 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..textkit.sentences import sentences

__all__ = ["rule_questions", "claim_question", "is_noncommittal"]

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_AUX = {"is", "are", "was", "were", "can", "could", "will", "would", "should", "must", "may",
        "might", "shall", "does", "do", "did", "has", "have", "had"}
_HAVE = {"has": "Does", "have": "Do", "had": "Did"}
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "its", "their", "our",
                "your", "my", "his", "her", "each", "every", "all", "some", "any", "no"}
_PRONOUNS = {"it", "you", "we", "they", "he", "she", "there"}
# Words that may follow a verb (object or adverbial): what tells a verb from a plural noun.
_FOLLOW = _DETERMINERS | {"in", "on", "at", "within", "for", "from", "to", "by", "with", "about",
                          "after", "before", "between", "under", "over", "into", "through",
                          "per", "up", "out", "only", "both", "more", "less", "no", "not",
                          "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                          "ten", "twelve", "several", "many", "free", "full"}
_NUMBER = re.compile(r"^[\d$€£¥₩]")
_NOT_VERB = {"is", "was", "has", "does", "this", "its", "his", "hers", "yes", "us", "as",
             "thus", "plus", "less", "unless", "always", "sometimes", "perhaps", "across",
             "news", "series", "bus", "status", "analysis", "basis", "canvas", "campus",
             "bonus", "process", "access", "address", "business", "class", "pass", "glass"}
_KO_ENDINGS = (("입니다", "입니까"), ("니다", "니까"), ("이다", "인가"), ("한다", "하는가"),
               ("된다", "되는가"), ("있다", "있는가"), ("없다", "없는가"), ("요", "요"))


def _base(verb: str) -> str | None:
    """The base form of a regular third-person present verb, else None."""
    v = verb.lower()
    if not v.isalpha() or v in _NOT_VERB or len(v) < 4 or not v.endswith("s") or v.endswith("ss"):
        return None
    if v.endswith("ies"):
        return v[:-3] + "y"
    if v.endswith(("ches", "shes", "xes", "zes", "sses", "oes")):
        return v[:-2]
    return v[:-1]


def _lower_first(words: list[str]) -> list[str]:
    first = words[0].lower() if words else ""
    if first in _DETERMINERS or first in _PRONOUNS:
        return [first, *words[1:]]
    return words


def _takes_object(words: list[str], k: int) -> bool:
    """Whether the word after position ``k`` can open a verb's object or adverbial (the
    last word is never taken for the verb: "... offers four plans")."""
    if k + 1 >= len(words):
        return False
    nxt = words[k + 1].lower()
    return nxt in _FOLLOW or bool(_NUMBER.match(nxt))


def _english(claim: str) -> str:
    words = claim.rstrip(" .!;:").split()
    if len(words) < 2:
        return f"Is it true that {claim.rstrip(' .!')}?"
    for k in range(1, min(len(words), 8)):
        w = words[k].lower()
        if w in _AUX:
            subject, rest = _lower_first(words[:k]), words[k + 1:]
            if w in _HAVE and not (rest and rest[0].lower() in ("been", "not", "to")):
                return " ".join([_HAVE[w], *subject, "have", *rest]) + "?"
            return " ".join([w.capitalize(), *subject, *rest]) + "?"
        if words[k - 1].lower() in _DETERMINERS or not _takes_object(words, k):
            continue
        base = _base(words[k])
        if base is not None:
            return " ".join(["Does", *_lower_first(words[:k]), base, *words[k + 1:]]) + "?"
        if (w.isalpha() and w.islower() and len(w) > 2 and not w.endswith("ly")
                and words[k - 1].lower().endswith("s")):
            return " ".join(["Do", *_lower_first(words[:k]), w, *words[k + 1:]]) + "?"
    body = claim.rstrip(" .!")
    return f"Is it true that {body[:1].lower() + body[1:] if body[1:2].islower() else body}?"


def _korean(claim: str) -> str:
    body = claim.rstrip(" .!。")
    for ending, question in _KO_ENDINGS:
        if body.endswith(ending):
            return body[: len(body) - len(ending)] + question + "?"
    return body + "?"


def claim_question(claim: str) -> str:
    """The question one claim answers.

    >>> claim_question("The Pro plan can be cancelled anytime.")
    'Can the Pro plan be cancelled anytime?'
    >>> claim_question("The Dock ships within 5 business days.")
    'Does the Dock ship within 5 business days?'
    >>> claim_question("프로 요금제는 30일 전에 해지를 통보해야 합니다.")
    '프로 요금제는 30일 전에 해지를 통보해야 합니까?'
    """
    claim = " ".join(claim.split())
    if not claim:
        return ""
    if claim.endswith("?"):
        return claim
    return _korean(claim) if _HANGUL.search(claim) else _english(claim)


def is_noncommittal(response: str) -> bool:
    """True when every sentence of the response declines or redirects (en + ko)."""
    from ..textkit.refusal import is_refusal

    parts = sentences(response)
    return bool(parts) and all(is_refusal(p) for p in parts)


def _without_question(claim: str, question: str) -> str:
    """A claim with the user's question taken out: a judge may prefix it to make a short
    answer self-contained ("What is X? Yes."), but a question written from it would then
    repeat the user's question and score the answer as relevant whatever it says."""
    asked = {" ".join(s.split()) for s in sentences(question)} | {" ".join(question.split())}
    kept = [s for s in sentences(claim) if " ".join(s.split()) not in asked]
    return " ".join(kept)


def rule_questions(claims: Sequence[str], response: str, n: int,
                   question: str = "") -> tuple[list[str], bool]:
    """Up to ``n`` questions from the first claims (or sentences) of the response, and
    whether the response is non-committal."""
    if is_noncommittal(response):
        return [], True
    if question.strip():
        claims = [_without_question(c, question) for c in claims]
    # "Yes." or "Sure!" answers no question of its own; fall back to it only when alone.
    source = ([c for c in claims if len(c.split()) >= 3 or _HANGUL.search(c)]
              or [c for c in claims if c.strip()] or sentences(response))
    questions = [q for q in (claim_question(c) for c in source) if q]
    return list(dict.fromkeys(questions))[:n], False
