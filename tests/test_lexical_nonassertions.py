"""Refusals, hedges, redirections and sign-offs yield no claim; factual sentences stay claims.

The sentences (tests/data/non_assertions.json) were written for this test in English and
Korean; the rules were written against the "dev" halves, the "heldout" halves checked after
(see the file's note for how they first fared).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noisegauge.judges.lexical import extract_spans
from noisegauge.textkit.refusal import is_refusal

DATA = json.loads((Path(__file__).resolve().parent / "data" / "non_assertions.json")
                  .read_text(encoding="utf-8"))
NON_CLAIMS = DATA["non_claims"]["dev"] + DATA["non_claims"]["heldout"]
CLAIMS = DATA["claims"]["dev"] + DATA["claims"]["heldout"]


def test_the_set_is_large_and_bilingual() -> None:
    assert len(NON_CLAIMS) >= 60 and len(CLAIMS) >= 60
    for group in (NON_CLAIMS, CLAIMS):
        assert sum(any("\uac00" <= ch <= "\ud7a3" for ch in s) for s in group) >= 10


@pytest.mark.parametrize("sentence", NON_CLAIMS)
def test_non_assertions_yield_no_claim(sentence: str) -> None:
    assert extract_spans(sentence) == []
    assert extract_spans(sentence, "What does the Pro plan cost?") == []


@pytest.mark.parametrize("sentence", CLAIMS)
def test_factual_sentences_stay_claims(sentence: str) -> None:
    assert extract_spans(sentence), sentence
    assert not is_refusal(sentence)


def test_a_refusal_next_to_a_fact_keeps_the_fact() -> None:
    text = ("I couldn't find any information about the Team plan's storage limit. "
            "The Pro plan includes 100 GB of storage.")
    assert [c.text for c in extract_spans(text)] == ["The Pro plan includes 100 GB of storage."]


def test_a_redirection_with_a_contact_detail_is_a_claim() -> None:
    assert extract_spans("Please contact billing@example.com for invoices.")
    assert not extract_spans("Please contact our billing team for invoices.")


@pytest.mark.parametrize("sentence", [
    "HTTP 404는 서버가 요청한 리소스를 찾을 수 없다는 뜻입니다.",
    "이 오류는 파일을 찾을 수 없다는 의미입니다.",
    "결제 오류는 카드를 확인할 수 없다는 메시지가 표시됩니다.",
])
def test_a_reported_cannot_find_is_a_statement_not_a_refusal(sentence: str) -> None:
    # What an error or a code *means* is checkable; "찾을 수 없습니다" said by the assistant is not.
    assert not is_refusal(sentence)
    assert extract_spans(sentence)


@pytest.mark.parametrize("sentence", [
    "죄송하지만 찾을 수 없다는 답변밖에 드릴 수 없습니다.",
    "제공된 자료로는 확인할 수 없다는 점 양해 부탁드립니다.",
])
def test_the_speaker_reporting_its_own_inability_is_still_a_refusal(sentence: str) -> None:
    assert is_refusal(sentence)
