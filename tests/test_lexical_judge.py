"""Verdicts of the lexical judge: contradictions are never entailed, simple entailments are."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from noisegauge.judges import get_judge, judge_identity
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.verdicts import Verdict

E, N, C = Verdict.ENTAILED, Verdict.NEUTRAL, Verdict.CONTRADICTED

PREMISE_EN = ("Pro plan subscriptions can be cancelled anytime with a 30-day notice period. "
              "The Pro plan costs $49.99 per month and includes SSO. "
              "Version 2.3 added audit logs on March 3, 2021.")
PREMISE_KO = "Pro 플랜은 월 49달러이며 30일 전에 통보하면 언제든지 해지할 수 있습니다. Pro 플랜에는 SSO가 포함됩니다."


@pytest.fixture(scope="module")
def judge() -> LexicalJudge:
    return LexicalJudge()


def verdict(judge: LexicalJudge, premise: str, claim: str) -> Verdict:
    return judge.explain(premise, claim).verdict


@pytest.mark.parametrize("claim", [
    "Pro plan requires a 90-day notice.",                     # duration
    "The Pro plan costs $59.99 per month.",                   # currency amount
    "The Pro plan costs $49.99 per year.",                    # unit of the rate
    "The Enterprise plan costs $49.99 per month.",            # swapped product name
    "Pro plan subscriptions cannot be cancelled.",            # negation
    "The Pro plan does not include SSO.",                     # negation
    "Version 3.1 added audit logs.",                          # version
    "v3.1 added audit logs.",                                 # version, short form
    "Version 2.3 added audit logs on March 4, 2021.",         # date
    "Version 2.3 removed audit logs.",                        # antonym
])
def test_english_mismatches_are_contradicted(judge: LexicalJudge, claim: str) -> None:
    assert verdict(judge, PREMISE_EN, claim) is C


@pytest.mark.parametrize("claim", [
    "Pro 플랜은 90일 전에 통보해야 해지할 수 있습니다.",     # duration
    "Pro 플랜은 월 99달러입니다.",                           # amount
    "Enterprise 플랜은 월 49달러입니다.",                    # swapped product name
    "Pro 플랜은 해지할 수 없습니다.",                        # negation
])
def test_korean_mismatches_are_contradicted(judge: LexicalJudge, claim: str) -> None:
    assert verdict(judge, PREMISE_KO, claim) is C


@pytest.mark.parametrize("premise,claim", [
    (PREMISE_EN, "The Pro plan costs $10 per month."),
    (PREMISE_EN, "The Pro plan has a 14-day free trial."),
    (PREMISE_EN, "Pro plan subscriptions cannot be cancelled with a 30-day notice."),
    (PREMISE_KO, "무료 체험은 14일입니다."),
    (PREMISE_KO, "Pro 플랜은 환불이 불가능합니다."),
    ("Alice was born in 1990 in Paris.", "Alice was born in 1991 in Paris."),
    ("The company has 5 employees.", "The company has 7 employees."),
    ("Prices rose by 10% in 2020.", "Prices rose by 12% in 2020."),
])
def test_number_negation_or_absent_facts_are_never_entailed(judge: LexicalJudge, premise: str,
                                                            claim: str) -> None:
    assert verdict(judge, premise, claim) is not E


@pytest.mark.parametrize("premise,claim", [
    (PREMISE_EN, "The Pro plan costs $49.99 per month."),
    (PREMISE_EN, "The Pro plan includes SSO."),
    (PREMISE_EN, "Pro plan subscriptions can be cancelled with a 30-day notice."),
    (PREMISE_EN, "Version 2.3 added audit logs."),
    (PREMISE_KO, "Pro 플랜은 월 49달러입니다."),
    (PREMISE_KO, "Pro 플랜은 30일 전에 통보하면 해지할 수 있습니다."),
    ("Allison Goertz (born March 2, 1991) is an American musician.",
     "Allison Goertz is an American musician."),
    ("The Oberoi Group is a hotel company with its head office in Delhi.",
     "The Oberoi family is part of a hotel company that has a head office in what city? Delhi"),
])
def test_simple_entailments(judge: LexicalJudge, premise: str, claim: str) -> None:
    assert verdict(judge, premise, claim) is E


def test_unrelated_claim_is_neutral(judge: LexicalJudge) -> None:
    assert verdict(judge, PREMISE_EN, "The moon orbits the Earth every 27 days.") is N
    assert verdict(judge, PREMISE_EN, "Mumbai is the financial capital of India.") is N


def test_check_and_check_many_agree(judge: LexicalJudge) -> None:
    claims = ["The Pro plan includes SSO.", "Pro plan requires a 90-day notice.", "The sky is green."]
    premises = [PREMISE_EN, PREMISE_KO, ""]
    many = asyncio.run(judge.check_many(premises, claims))
    assert many == [asyncio.run(judge.check(p, claims)) for p in premises]
    assert many[0] == [E, C, N]
    assert many[2] == [N, N, N]


def test_registry_identity_and_determinism() -> None:
    a, b = get_judge("lexical"), get_judge("lexical")
    ident = judge_identity(a)
    assert ident["judge"] == "lexical" and ident["model"].startswith("gbt-")
    assert ident == judge_identity(b)
    claims = ["The Pro plan includes SSO.", "Version 3.1 added audit logs."]
    assert asyncio.run(a.check(PREMISE_EN, claims)) == asyncio.run(b.check(PREMISE_EN, claims))


def test_weights_load_without_numpy_or_sklearn() -> None:
    code = ("import sys, asyncio; from noisegauge.judges import get_judge; "
            "j = get_judge('lexical'); asyncio.run(j.check('a b c', ['a b c'])); "
            "import json; print(json.dumps(sorted(m for m in ('numpy', 'sklearn', 'torch') "
            "if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


# Regressions found on examples/support_bot.jsonl: cues are judged where the premise says the
# claim, not anywhere in the chunk.
RATE_LIMITS = ("Developer Docs › Rate limits. Limits apply per workspace, not per token. Team "
               "workspaces can make up to 1,500 API requests per minute. Requests over the limit "
               "receive an HTTP 429 response with a Retry-After header.")
REFUNDS = ("Annual plans can be refunded within 30 days of purchase. After 30 days, annual "
           "plans are not refundable.")


@pytest.mark.parametrize("premise,claim,expected", [
    # A claim standing verbatim in the premise; the "not per token" negation is elsewhere.
    (RATE_LIMITS, "Team workspaces can make up to 1,500 API requests per minute.", E),
    # Another name near an anchor word in an unrelated sentence is not a contradiction.
    (("Trust Center › Moving regions. A workspace owner can request a region move under "
      "Settings › Data residency. Region moves are completed within 10 business days."),
     "Yes, a Team workspace can use the EU region.", N),
    # A leading "Yes," states nothing the premise must hold.
    (("Yes, Team workspaces can choose the EU region. EU-region data is stored in Frankfurt, "
      "Germany. Region moves are completed within 10 business days."),
     "Yes, a Team workspace can use the EU region.", E),
    # Per user == per seat, and "per user per month" includes "per month".
    ("On monthly billing, Pro costs $29 per user per month.",
     "On monthly billing, each Pro seat costs $29 per month.", E),
    # A negation in the next sentence does not deny this one.
    (REFUNDS, "Annual plans can be refunded within 30 days of purchase.", E),
    (REFUNDS, "Annual plans are not refundable within 30 days of purchase.", C),
    # Product codes compare whole, like numbers.
    (("NG-TEAM-M is the monthly Team subscription. "
      "NG-TEAM-Y is the annual Team subscription."),
     "The monthly Team subscription SKU is NG-TM-M.", C),
    ("NG-TEAM-M is the monthly Team subscription.", "The monthly Team subscription is NG-TEAM-M.", E),
    # Numbers written as words or with separators.
    ("Failed deliveries are retried up to five times.", "Failed deliveries are retried 5 times.", E),
])
def test_support_bot_regressions(judge: LexicalJudge, premise: str, claim: str,
                                 expected: Verdict) -> None:
    assert verdict(judge, premise, claim) is expected


def test_code_never_entailed_by_a_near_miss(judge: LexicalJudge) -> None:
    premise = "Order Desk › SKU list. The Dock is sold as NG-HW-DOCK."
    assert verdict(judge, premise, "The Dock is sold as NG-HW-DOCK2.") is not E
    assert verdict(judge, premise, "The Dock is sold as NG-HW-DOC.") is not E


@pytest.mark.parametrize("premise,claim", [
    # Quantifiers and order words the premise does not state are claims it does not make.
    (("David Lee Roth is an American rock vocalist. In 2007, he was inducted into the Rock and "
      "Roll Hall of Fame. Cia Berg is a Swedish television presenter and singer."),
     "Both David Lee Roth and Cia Berg were inducted into the Rock and Roll Hall of Fame."),
    ("Annual plans can be refunded within 30 days of purchase.",
     "Only annual plans can be refunded within 30 days of purchase."),
])
def test_unstated_operator_words_are_not_entailed(judge: LexicalJudge, premise: str,
                                                  claim: str) -> None:
    assert verdict(judge, premise, claim) is not E


def test_a_denial_another_sentence_shares_is_no_conflict(judge: LexicalJudge) -> None:
    """"CS 101 has no prerequisites" is said by "CS 101 Introduction to Programming (4
    credits). No prerequisites." though its best-covering sentence has no negation."""
    premise = "CS 101 Introduction to Programming (4 credits). No prerequisites. Offered every term."
    assert verdict(judge, premise, "CS 101 has no prerequisites.") is not C
