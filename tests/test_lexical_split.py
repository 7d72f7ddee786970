"""Claim splitting of the lexical judge: English and Korean, spans, nothing dropped."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisegauge.judges.lexical import LexicalJudge, extract_spans


def texts(text: str, question: str | None = None) -> list[str]:
    return [c.text for c in extract_spans(text, question)]


def test_sentences_without_final_period_are_claims() -> None:
    assert texts("The plan costs $10. Refunds take 5 days") == [
        "The plan costs $10.", "Refunds take 5 days"]
    assert texts("no punctuation at all here") == ["no punctuation at all here"]


def test_abbreviations_initials_and_decimals_do_not_split() -> None:
    text = ("Dr. Smith of the U.S. Department of Energy, e.g. its v2.3 team, paid $49.99 "
            "to J. R. Doe. He left.")
    assert texts(text) == [
        "Dr. Smith of the U.S. Department of Energy, e.g. its v2.3 team, paid $49.99 to J. R. Doe.",
        "He left."]


def test_markdown_headers_bullets_and_bold() -> None:
    text = ("## Pricing\n"
            "The **Pro plan** includes:\n"
            "- SSO login\n"
            "- audit logs\n"
            "\n"
            "1. Refunds are issued within 14 days\n"
            "2. Support answers in [one day](https://example.com)\n")
    assert texts(text) == [
        "The Pro plan includes: SSO login",
        "The Pro plan includes: audit logs",
        "Refunds are issued within 14 days",
        "Support answers in one day",
    ]


def test_coordinated_clauses_split_only_when_both_sides_are_clauses() -> None:
    assert texts("The Pro plan costs $49 per month, and it includes SSO.") == [
        "The Pro plan costs $49 per month", "The Pro plan includes SSO."]
    # "A, B, and C" lists are one claim.
    assert len(texts("The plan includes SSO, audit logs, and priority support.")) == 1


def test_leading_pronoun_resolved_to_previous_subject() -> None:
    assert texts("The Pro plan costs $49. It includes SSO. This plan has no seat limit.") == [
        "The Pro plan costs $49.", "The Pro plan includes SSO.", "The Pro plan has no seat limit."]
    # No clear subject: the pronoun stays.
    assert texts("Yesterday we shipped. It works.")[1] == "It works."


def test_korean_sentence_endings() -> None:
    assert texts("Pro 플랜은 월 49달러입니다. 30일 전에 해지할 수 있습니다 환불은 불가능합니다") == [
        "Pro 플랜은 월 49달러입니다.", "30일 전에 해지할 수 있습니다", "환불은 불가능합니다"]
    assert texts("Pro 플랜은 월 49달러이고, 30일 전에 해지할 수 있습니다.") == [
        "Pro 플랜은 월 49달러이고", "30일 전에 해지할 수 있습니다."]
    assert texts("요금제는 두 가지예요 무료와 유료가 있어요") == ["요금제는 두 가지예요", "무료와 유료가 있어요"]


def test_questions_and_interjections_are_not_claims() -> None:
    assert texts("Sure! Elvis was born in Tupelo. Have you heard Hound Dog? Cool.") == [
        "Elvis was born in Tupelo."]
    assert texts("Did you know that Jupiter has radio storms? Wow!") == ["Jupiter has radio storms"]
    assert texts("네 좋아요. 환불은 불가능합니다.") == ["환불은 불가능합니다."]


def test_bare_answer_becomes_question_answer_claim() -> None:
    assert texts("Delhi", "Where is the head office?") == ["Where is the head office? Delhi"]
    # A full sentence stands on its own.
    assert texts("The head office is in Delhi.", "Where is the head office?") == [
        "The head office is in Delhi."]


@pytest.mark.parametrize(("text", "question"), [
    # A CSV cell that is a spreadsheet formula is no bare answer (it is not glued either
    # when it is short: what it says is left to the judge as it stands).
    ('=HYPERLINK("http://evil.example/reset","Reset your password")',
     "How do I reset my password?"),
    ("@SUM(A1:A9)", "What is the total?"),
    # Full sentences in scripts the English verb list cannot read: Hebrew, Korean.
    ("המדיניות מאפשרת ביטול בכל עת.", "What is the cancellation policy?"),
    ("ניתן לבטל בכל עת", "What is the cancellation policy?"),
    ("환불은 불가능합니다.", "환불이 되나요?"),
    ("서면점 IMAX 관람료는 20,000원입니다.", "시네마루 서면점 IMAX 관람료가 얼마인가요?"),
])
def test_a_formula_or_a_non_latin_sentence_is_not_glued_to_the_question(text: str,
                                                                        question: str) -> None:
    assert texts(text, question) == [text]


@pytest.mark.parametrize(("text", "question", "claim"), [
    ("Delhi", "Where is the head office?", "Where is the head office? Delhi"),
    ("30 days.", "How long is the notice period?", "How long is the notice period? 30 days."),
    ("-40", "What is the lowest temperature?", "What is the lowest temperature? -40"),
    ("תל אביב", "Where is the head office?", "Where is the head office? תל אביב"),
    ("서울", "본사는 어디에 있나요?", "본사는 어디에 있나요? 서울"),
    ("30일", "통보 기간은 며칠인가요?", "통보 기간은 며칠인가요? 30일"),
])
def test_a_bare_answer_in_any_script_still_gets_its_question(text: str, question: str,
                                                             claim: str) -> None:
    assert texts(text, question) == [claim]


def test_spans_map_back_to_the_source() -> None:
    text = "# Plans\n- **Pro**: $49.99/month.\n- Enterprise: custom pricing\n\nIt is new. 환불은 불가능합니다."
    for c in extract_spans(text):
        source = text[c.start:c.end]
        assert source == source.strip()
        assert re.sub(r"[*_`]", "", source) in c.text


_WORDS = st.sampled_from(
    ["the", "plan", "costs", "$49.99", "v2.3", "Dr.", "U.S.", "e.g.", "and", "it", "includes", "SSO", "30-day", "notice", "플랜은", "월", "49달러입니다", "해지할", "수", "있습니다", "refunds", "are", "not", "available", "Pro", "Enterprise", "1,000", "users"])
_SEP = st.sampled_from([" ", " ", " ", ". ", "! ", ", and ", "; ", "\n", "\n- ", "\n\n", "다. "])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_WORDS, _SEP), min_size=1, max_size=30))
def test_no_text_is_dropped(parts: list[tuple[str, str]]) -> None:
    text = "".join(w + s for w, s in parts)
    covered = [False] * len(text)
    for c in extract_spans(text):
        for i in range(c.start, c.end):
            covered[i] = True
    # Every word character is inside some claim's span (no headings, lead-ins, questions or
    # interjection-only sentences can be generated here).
    for m in re.finditer(r",\s+(?:and|but|while|whereas|so|yet)\s", text):
        covered[m.start():m.end()] = [True] * (m.end() - m.start())  # a split clause's connective
    lost = [text[i] for i in range(len(text)) if text[i].isalnum() and not covered[i]]
    assert not lost, (text, lost)


def test_extract_is_the_async_face_of_extract_spans() -> None:
    text = "The Pro plan costs $49. It includes SSO."
    assert asyncio.run(LexicalJudge().extract(text)) == texts(text)


def test_code_before_a_period_is_not_an_initial() -> None:
    text = ("The monthly Team subscription SKU is NG-TM-M. "
            "The annual Team subscription SKU is NG-TEAM-Y.")
    assert [c.text for c in extract_spans(text)] == [
        "The monthly Team subscription SKU is NG-TM-M.",
        "The annual Team subscription SKU is NG-TEAM-Y."]
    first = extract_spans("J. R. Smith wrote it. It sold well.")[0]
    assert first.text == "J. R. Smith wrote it."


def test_sentences_glued_without_a_space_are_split() -> None:
    from noisegauge.judges.lexical.split import sentence_spans

    text = "It is in Vancouver, British Columbia.Kings of Leon is a band. See Node.js docs."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "It is in Vancouver, British Columbia.", "Kings of Leon is a band.", "See Node.js docs."]


def test_long_sentences_split_into_facts() -> None:
    # A relative clause, an appositive and a second predicate each become a fact of their own,
    # with the words that say what the fact is about.
    assert texts("They announced the departure of club captain Per Mertesacker, who retired "
                 "to become their new academy coach.") == [
        "They announced the departure of club captain Per Mertesacker",
        "Per Mertesacker retired to become their new academy coach"]
    assert texts("Arnold is currently the publisher and editorial director of Media Play News, "
                 "one of five Hollywood trades.") == [
        "Arnold is currently the publisher and editorial director of Media Play News",
        "Media Play News is one of five Hollywood trades"]
    assert texts("He was waived on November 5, 2018 and was re-signed to the practice squad.") == [
        "He was waived on November 5, 2018", "He was re-signed to the practice squad."]
    # Short sentences stay whole: one fact, or too little to split safely.
    assert texts("The Pro plan, which is new, costs $49.") == ["The Pro plan, which is new, costs $49."]


@pytest.mark.parametrize("text", [
    "I don't have information about that.",
    "Sorry, I cannot find any details on EU shipping",
    "There is no information about refunds in the provided documents.",
    "The provided context does not mention the Team plan.",
    "죄송하지만 해당 내용에 대한 정보가 없습니다.",
    "그 질문에는 답변을 드릴 수 없습니다.",
])
def test_a_refusal_states_no_claim(text: str) -> None:
    assert extract_spans(text) == []


def test_a_refusal_next_to_a_fact_keeps_the_fact() -> None:
    claims = [c.text for c in extract_spans(
        "I don't know the exact ship date. The Dock ships from Rotterdam.")]
    assert claims == ["The Dock ships from Rotterdam."]


def test_a_refusal_answer_is_undefined_not_hallucination() -> None:
    from noisegauge import NoiseSensitivity
    result = NoiseSensitivity(judge="lexical").score(
        user_input="Do you ship the Dock to the EU?", response="I don't have information about that.",
        reference="Yes, the Dock ships to the EU for 15 euros.", retrieved_contexts=["Unrelated."])
    assert result.status == "undefined" and result.value is None
    assert result.sample.value("hallucination") is None
