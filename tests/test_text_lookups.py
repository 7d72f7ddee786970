"""The lookups the speed work added must give what the scans they replace gave: tokens read
sentence by sentence are the whole text's tokens, and the quantities ``like`` offers hold every
one ``same_quantity`` / ``stated`` accept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from noisegauge.scoring.misattribution.tokens import like, same_quantity, stated
from noisegauge.textkit.spans import spanned
from noisegauge.textkit.tokens import tokenize, tokenize_by_sentence

_WORDS = ["Pro", "plan", "costs", "$49.99", "per", "month", "30-day", "notice", "90", "days",
          "3", "months", "48", "hours", "two", "weeks", "Dr.", "Smith", "e.g.", "v2.3", "NG-TM-M",
          "refunds", "are", "not", "allowed", "came", "back", "18:00", "1st", "July", "1",
          "플랜은", "30일", "이내", "환불", "가능합니다", "만", "8천", "원", "U.S.", "Vancouver.Kings",
          "(LIC)", "'Nova'", "“Nova”", "!", "?", ",", ";", "5%", "2011.", "etc."]
_ENDS = [". ", "! ", "? ", "\n", " ", ", ", ".\n\n", "다. "]


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_ENDS)),
                          min_size=1, max_size=40))
    return "".join(w + e for w, e in parts)


@settings(max_examples=400, deadline=None)
@given(texts())
def test_tokens_read_sentence_by_sentence_are_the_whole_texts(text: str) -> None:
    assert tokenize_by_sentence(text) == tokenize(text)


def test_tokens_by_sentence_on_known_edges() -> None:
    for text in ["Plans renew yearly. Refunds came back to 30 days. Smith's band formed in 2011.",
                 'He said "It\'s, like, falling apart." In the summer of 2013, it shipped.',
                 "Vancouver.Kings of Leon played. Dr. Smith left at 18:00. Then NG-TM-M shipped.",
                 "Pro 플랜은 30일 이내 환불이 가능합니다. Basic 플랜은 환불되지 않습니다. 1만 8천 원입니다.",
                 "", "   ", "One sentence only"]:
        assert tokenize_by_sentence(text) == tokenize(text), text


@settings(max_examples=300, deadline=None)
@given(texts(), texts())
def test_like_offers_every_quantity_that_states_another(a: str, b: str) -> None:
    x, y = spanned(a), spanned(b)
    for q in x.quantities:
        offered = like(y, q)
        assert offered == [p for p in y.quantities if p in offered]  # the text's order
        for p in y.quantities:
            if same_quantity(q, p) or stated(q, p):
                assert p in offered, (q, p)


def test_like_offers_spans_of_time_in_other_units() -> None:
    x = spanned("Refunds within 3 months, or 48 hours for gift cards.")
    y = spanned("Refunds within 90 days. Gift cards: two days.")
    got = {(q.value, q.unit): [(p.value, p.unit) for p in like(y, q) if same_quantity(q, p)]
           for q in x.quantities}
    assert got[(3.0, "month")] == [(90.0, "day")]
    assert got[(2880.0, "minute")] == [(2.0, "day")]  # (hours are read as minutes)
