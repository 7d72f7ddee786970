"""``Analysis``: one text read for comparison, the shape premises and claims share. Its own
module so the rule modules (``amounts``, ``slots``) and ``features`` that builds it all import
it from below, with no circle between them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...textkit.quantity import Quantity
from ...textkit.tokens import Token

__all__ = ["Analysis"]


@dataclass(frozen=True)
class Analysis:
    """One text, ready for comparison (premises and claims share this shape)."""

    tokens: tuple[Token, ...]
    content: tuple[int, ...]            # indices of content tokens
    sentences: tuple[frozenset[str], ...]  # per sentence: content stems
    sent_of: tuple[int, ...]            # sentence index of each token
    norms: frozenset[str]
    prefixes: frozenset[str]            # Hangul word prefixes and 5-letter Latin prefixes
    quantities: tuple[Quantity, ...]
    negated: tuple[frozenset[str], ...]  # per sentence: stems right after a negation (its head)
    positions: dict[str, tuple[int, ...]]  # stem -> its ranks among the content tokens
    entities: frozenset[str]            # stems written with a capital not at sentence start
    initial: frozenset[str]             # capitalised sentence-initial stems
    codes: frozenset[str]               # product codes and identifiers (NG-TEAM-M)
    words: tuple[frozenset[str], ...]   # per sentence: lower-cased token texts (stop words too)
    #: per sentence: the content stems of the heading it opens with ("Elite membership:")
    heads: tuple[frozenset[str], ...] = ()
    where: dict[str, tuple[int, ...]] = field(default_factory=dict)  # stem -> token indices
    after_heading: frozenset[int] = frozenset()  # index of each token right after a heading
    #: +1 / -1 when the text opens by answering yes / no ("No. Basic uses password login").
    polarity: int = 0
    #: content stem -> the sentences holding it, as bits (sentence ``s`` is ``1 << s``)
    masks: dict[str, int] = field(default_factory=dict)
    #: content stem -> the sentences holding it, in order (``masks`` as indices)
    in_sentences: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: What is worked out of this text only when it is a claim, once (``_weighted``).
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
