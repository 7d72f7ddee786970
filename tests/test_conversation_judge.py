"""Conversations, the judge side (#32): claims made standalone with the history, history
never evidence, single-turn paths and cache keys unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from noisegauge import Sample, Verdict, evaluate, get_judge
from noisegauge.infra.store import JudgeCache
from noisegauge.judges.base import ConversationalExtractor, Judge, metered
from noisegauge.judges.cached import CachedJudge
from noisegauge.judges.canaries import CanaryReport, watch
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.judges.lexical.split import extract_spans
from noisegauge.judges.lexical.turns import conversational_spans, standalone_question
from noisegauge.report.align import locate
from noisegauge.samples import Turn
from noisegauge.scoring import ascore_sample
from noisegauge.testing.faults import FaultyJudge

CASES = Path(__file__).parent / "data" / "conversations" / "dev.jsonl"
NOISE = ("relevant_noise", "irrelevant_noise")


def load_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line]


def case_sample(case: dict[str, Any], *, history: bool = True) -> Sample:
    return Sample(user_input=case["user_input"], response=case["response"],
                  reference=case["reference"], retrieved_contexts=case["retrieved_contexts"],
                  id=case["id"],
                  history=tuple(Turn(t["role"], t["content"]) for t in case["history"])
                  if history else ())


def claims_of(sample: Sample, judge: Judge | None = None) -> list[dict[str, Any]]:
    row = next(evaluate([sample], judge=judge or get_judge("lexical")).rows())
    assert row["status"] == "ok", row
    return list(row["response_claims"])


STARTER = (Turn("user", "What does the Starter plan cost?"),
           Turn("assistant", "The Starter plan costs $10 a month."))
REFUND = (Turn("user", "How long can annual plans be refunded?"), Turn("assistant", "30 days."))
#: The issue's example: after turns about the Starter plan, "it" with the Business plan's detail.
CARRIED = Sample(user_input="Does it include phone support?",
                 response="Yes, it includes 24/7 phone support.",
                 reference="No, it only includes email support.",
                 retrieved_contexts=["Starter plan: $10 a month, email support only.",
                                     "Business plan: $50 a month, includes 24/7 phone support."],
                 history=STARTER)


# -- the offline judge ---------------------------------------------------------------------

@pytest.mark.parametrize("case", load_cases(), ids=lambda c: c["id"])
def test_dev_case_claims_name_the_history_entity(case: dict[str, Any]) -> None:
    claims = claims_of(case_sample(case))
    assert claims and all(case["entity"].lower() in c["text"].lower() for c in claims), claims
    if not case["noise_ok"]:
        assert not [c for c in claims if c["bucket"] in NOISE], claims


def test_last_turn_only_is_the_baseline_the_history_improves() -> None:
    cases = load_cases()
    last = [c for case in cases for c in claims_of(case_sample(case, history=False))]
    chat = [c for case in cases for c in claims_of(case_sample(case))]
    named = [sum(case["entity"].lower() in c["text"].lower() for c in claims_of(case_sample(case, history=h)))
             for h in (False, True) for case in cases]
    assert sum(named[len(cases):]) == len(chat) > sum(named[:len(cases)])
    assert sum(c["bucket"] in NOISE for c in last) > sum(c["bucket"] in NOISE for c in chat)


def test_detail_carried_from_another_plan_is_a_hallucination_not_noise() -> None:
    """The issue's example: "it" is the Starter plan; 24/7 phone support is the Business
    chunk's. Read alone the claim is found in that chunk (noise); with the history it is a
    claim about the Starter plan that no chunk supports."""
    sample = CARRIED
    row = next(evaluate([sample], judge="lexical").rows())
    [claim] = row["response_claims"]
    assert claim["text"] == "The Starter plan includes 24/7 phone support."
    assert claim["bucket"] == "hallucination" and claim["entailed_by"] == []
    # ...with its detail marked as the Business chunk's (the earlier turn names the plan asked
    # about, which the misattribution hints read).
    assert claim["misattributed_from"] == [1]
    assert row["metrics"]["noise_sensitivity_irrelevant"] == 0.0
    assert row["metrics"]["hallucination"] == 1.0
    # The reference, written for the last turn only, is read with the same history.
    assert [c["text"] for c in row["reference_claims"]] == [
        "The Starter plan only includes email support."]
    alone = next(evaluate([Sample(**{**_fields(sample), "history": ()})], judge="lexical").rows())
    assert alone["response_claims"][0]["bucket"] == "irrelevant_noise"


def test_a_bare_answer_in_a_chat_is_checked_for_what_the_follow_up_asks_about() -> None:
    """"60 days." to "And for monthly plans?" is the annual plans' figure: with the history
    the claim is about monthly plans, which no chunk gives 60 days (a hallucination), where
    the last turn alone finds "60 days" in the annual plans' chunk (noise). A right bare
    answer is still supported by its own chunk."""
    chunks = ["Annual plans can be refunded within 60 days of purchase.",
              "Monthly plans can be refunded within 14 days of purchase."]
    sample = Sample(user_input="And for monthly plans?", response="60 days.",
                    reference="Monthly plans can be refunded within 14 days.",
                    retrieved_contexts=chunks, history=REFUND)
    row = next(evaluate([sample], judge="lexical").rows())
    [claim] = row["response_claims"]
    assert claim["text"] == "How long can monthly plans be refunded? 60 days for monthly plans."
    assert claim["bucket"] == "hallucination" and claim["entailed_by"] == []
    assert row["metrics"]["noise_sensitivity_irrelevant"] == 0.0
    alone = next(evaluate([Sample(**_fields(sample))], judge="lexical").rows())
    assert alone["response_claims"][0]["bucket"] == "irrelevant_noise"
    right = Sample(**{**_fields(sample), "response": "14 days."}, history=REFUND)
    [claim] = next(evaluate([right], judge="lexical").rows())["response_claims"]
    assert claim["bucket"] == "grounded" and claim["entailed_by"] == [1]


def _fields(sample: Sample) -> dict[str, Any]:
    return {"user_input": sample.user_input, "response": sample.response,
            "reference": sample.reference, "retrieved_contexts": sample.retrieved_contexts}


def test_history_is_never_evidence() -> None:
    """An earlier answer said "2 users"; no chunk does. The claim stays unsupported (and the
    wrong earlier answer does not make it correct either)."""
    history = (Turn("user", "Tell me about the Starter plan."),
               Turn("assistant", "The Starter plan costs $10 a month and includes 2 users."))
    sample = Sample(user_input="How many users again?", response="It includes 2 users.",
                    reference="The Starter plan includes 1 user.",
                    retrieved_contexts=["Starter plan: $10 a month, 1 user.",
                                        "Team plan: $30 a month, 10 users."], history=history)
    row = next(evaluate([sample], judge="lexical").rows())
    [claim] = row["response_claims"]
    assert claim["text"] == "The Starter plan includes 2 users."
    assert claim["entailed_by"] == [] and claim["correct"] is False
    assert row["metrics"]["faithfulness"] == 0.0
    # What the history says verbatim is no premise either: the same claim as the history's
    # sentence is still entailed by nothing.
    echo = Sample(**{**_fields(sample), "response": "The Starter plan costs $10 a month.",
                     "retrieved_contexts": ["Team plan: $30 a month, 10 users."]}, history=history)
    row = next(evaluate([echo], judge="lexical").rows())
    assert row["response_claims"][0]["entailed_by"] == []
    assert row["metrics"]["faithfulness"] == 0.0


@pytest.mark.parametrize(("question", "history", "expected"), [
    ("And for monthly plans?", REFUND, "How long can monthly plans be refunded?"),
    ("What about the Business plan?",
     (Turn("user", "Does the Starter plan include SSO?"), Turn("assistant", "No.")),
     "Does the Business plan include SSO?"),
    ("Does it include SSO?", STARTER, "Does the Starter plan include SSO?"),
    ("그럼 월간 요금제는요?", (Turn("user", "연간 요금제는 며칠 안에 환불되나요?"),),
     "월간 요금제는 며칠 안에 환불되나요?"),
    ("월간은요?", (Turn("user", "연간 요금제는 며칠 안에 환불되나요?"),),
     "월간 요금제는 며칠 안에 환불되나요?"),
    ("How long can annual plans be refunded?", REFUND, "How long can annual plans be refunded?"),
])
def test_standalone_question(question: str, history: tuple[Turn, ...], expected: str) -> None:
    assert standalone_question(question, history) == expected


@pytest.mark.parametrize(("response", "question", "history", "expected"), [
    ("Seven days.", "And for monthly plans?", REFUND,
     ["How long can monthly plans be refunded? Seven days for monthly plans."]),
    ("$50 a month.", "How much does it cost?", STARTER,
     ["How much does the Starter plan cost? $50 a month for the Starter plan."]),
    ("Yes.", "And monthly plans?", (Turn("user", "Can annual plans be refunded?"),),
     ["Can monthly plans be refunded? Yes."]),
    ("500원이에요.", "해외 송금은요?", (Turn("user", "국내 송금 수수료는 얼마인가요?"),),
     ["해외 송금 수수료는 얼마인가요? 해외 송금은 500원이에요."]),
    ("20명이에요.", "팀 요금제는요?", (Turn("user", "프로 요금제는 몇 명까지 쓸 수 있나요?"),),
     ["팀 요금제는 몇 명까지 쓸 수 있나요? 팀 요금제는 20명이에요."]),
    ("They can be refunded within seven days.", "And for monthly plans?", REFUND,
     ["Monthly plans can be refunded within seven days."]),
    ("Yes, it includes 24/7 phone support. The same plan allows 3 users.",
     "Does it include phone support?", STARTER,
     ["The Starter plan includes 24/7 phone support.", "The Starter plan allows 3 users."]),
    ("네, 그 요금제는 24시간 전화 지원을 포함합니다.", "전화 지원도 포함되나요?",
     (Turn("user", "스타터 요금제는 얼마예요?"), Turn("assistant", "월 9,900원이에요.")),
     ["스타터 요금제는 24시간 전화 지원을 포함합니다."]),
    ("네, 그건 연간 결제를 하면 할인돼요.", "연간 결제도 되나요?",
     (Turn("user", "프로 요금제는 몇 명까지 쓸 수 있나요?"),),
     ["프로 요금제는 연간 결제를 하면 할인돼요."]),
    ("7일 안에 환불됩니다.", "월간 요금제는요?",
     (Turn("user", "연간 요금제는 며칠 안에 환불되나요?"),),
     ["월간 요금제는 7일 안에 환불됩니다."]),
])
def test_claims_made_standalone_keep_their_spans(response: str, question: str,
                                                 history: tuple[Turn, ...],
                                                 expected: list[str]) -> None:
    spans = conversational_spans(response, question, history)
    assert [c.text for c in spans] == expected
    # Each claim keeps the span of the response text it was made from.
    plain = extract_spans(response, question)
    assert [(c.start, c.end) for c in spans] == [(c.start, c.end) for c in plain]


def test_without_history_the_lexical_claims_are_the_single_turn_ones() -> None:
    judge = LexicalJudge()
    text = "Yes, it includes 24/7 phone support. Seven days."
    for q in ("Does it include phone support?", None):
        assert asyncio.run(judge.extract_in_conversation(text, q, ())) == \
            asyncio.run(judge.extract(text, q))


def test_report_spans_of_claims_that_borrow_words_from_the_conversation() -> None:
    context = "How long can annual plans be refunded?\n30 days.\nAnd for monthly plans?"
    claim = "Monthly plans can be refunded within seven days."
    assert locate(claim, "Seven days.") is None  # most of its words are the conversation's
    assert locate(claim, "Seven days.", context) == (0, 10)
    text = "Sure! Yes, it includes 24/7 phone support. Anything else?"
    assert locate("The Starter plan includes 24/7 phone support.", text,
                  "What does the Starter plan cost?") == (11, 41)


# -- the engine, user-written judges, wrappers and the cache -------------------------------

class PlainJudge:
    """A user-written judge with only the two protocol methods."""

    def __init__(self) -> None:
        self.questions: list[str | None] = []

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        self.questions.append(question)
        return [text]

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        return [Verdict.ENTAILED if c in premise else Verdict.NEUTRAL for c in claims]


def test_a_judge_without_the_capability_gets_the_plain_call() -> None:
    judge = PlainJudge()
    assert not isinstance(judge, ConversationalExtractor)
    sample = Sample(user_input="And for monthly plans?", response="Seven days.",
                    reference="Seven days.", retrieved_contexts=["Seven days."], history=REFUND)
    result = asyncio.run(ascore_sample(sample, judge))
    assert result.status == "ok"
    assert judge.questions == ["And for monthly plans?"] * 2


def test_wrappers_forward_the_capability() -> None:
    inner = LexicalJudge()
    for wrapped in (FaultyJudge(inner, "never"), watch(inner, CanaryReport())):
        assert isinstance(wrapped, ConversationalExtractor)
        assert asyncio.run(wrapped.extract_in_conversation("Seven days.", "And for monthly plans?",
                                                           REFUND)) == \
            ["How long can monthly plans be refunded? Seven days for monthly plans."]
    assert not isinstance(FaultyJudge(PlainJudge(), "x"), ConversationalExtractor)
    # The fault fires on a conversational extraction too.
    failing = FaultyJudge(inner, "monthly", mode="fail")
    with pytest.raises(ConnectionError):
        asyncio.run(failing.extract_in_conversation("Seven days.", "And for monthly plans?",
                                                    REFUND))


def test_cache_keys_conversational_extraction_by_history_only(tmp_path: Path) -> None:
    store = JudgeCache(tmp_path / "c.db")
    judge = CachedJudge(LexicalJudge(), store)
    text, question = "Seven days.", "And for monthly plans?"

    def run(history: tuple[Turn, ...]) -> tuple[list[str], int, int]:
        async def go() -> tuple[list[str], int, int]:
            with metered() as usage:
                claims = await judge.extract_in_conversation(text, question, history)
            return claims, usage.calls, usage.cached_calls
        return asyncio.run(go())

    async def plain() -> list[str]:
        return await judge.extract(text, question)

    single = asyncio.run(plain())
    # No history: the single-turn key, already filled by extract.
    assert run(()) == (single, 0, 1)
    first = run(REFUND)
    assert first[1:] == (1, 0) and first[0] != single
    assert run(REFUND) == (first[0], 0, 1)
    other = (Turn("user", "How long can weekly plans be refunded?"),)
    assert run(other)[1:] == (1, 0)
    # A judge that cannot read a history: the plain key and call.
    plain_cached = CachedJudge(PlainJudge(), store)
    assert asyncio.run(plain_cached.extract_in_conversation(text, question, REFUND)) == [text]


# -- the LLM judge, through the official SDK against the fake server -----------------------

def _chat_model(default: Any) -> Any:
    """Answers like a model that follows the conversational instruction: in a prompt with a
    <history> block, "it" in a text is the plan the history names."""
    import re

    def respond(request: Any, choice: int) -> str:
        task = request.first_user
        if "<history>" not in task:
            return str(default(request, choice))
        history = task.split("<history>\n", 1)[1].split("\n</history>", 1)[0]
        plan = re.search(r"the (\w+) plan", history)
        blocks = dict(re.findall(r"<(t\d+)>\n(.*?)\n</\1>", task, re.DOTALL))
        out = {}
        for tid, text in blocks.items():
            text = re.sub(r"^(?:Yes|No), ", "", text)
            out[tid] = [re.sub(r"^[Ii]t\b", f"The {plan.group(1)} plan" if plan else "It", text)]
        return json.dumps(out)
    return respond


def test_llm_judge_reads_the_history_in_its_extraction_call(fake_openai_server: Any) -> None:
    pytest.importorskip("openai")
    from noisegauge.judges.llm import prompts
    from noisegauge.judges.llm.judge import OpenAIJudge
    from noisegauge.testing import judge_responder

    server = fake_openai_server
    server.responder = _chat_model(judge_responder())
    judge = get_judge("openai:gpt-4o-mini", base_url=server.url, api_key="sk-test-key-123456")
    assert isinstance(judge, OpenAIJudge) and isinstance(judge, ConversationalExtractor)
    before = dict(judge.identity())
    sample = CARRIED
    result = asyncio.run(ascore_sample(sample, judge))
    assert result.status == "ok", result.reason
    requests = server.chat_requests()
    assert len(requests) == 2  # still one extraction and one check call per sample
    extraction, check = requests
    assert "<history>\nuser: What does the Starter plan cost?\nassistant: The Starter plan " \
           "costs $10 a month.\n</history>" in extraction.first_user
    assert "standalone" in extraction.messages[0]["content"]
    assert [c.text for c in result.evidence.response_claims] == [
        "The Starter plan includes 24/7 phone support."]
    assert [c.text for c in result.evidence.reference_claims] == [
        "The Starter plan only includes email support."]
    # History is never evidence: the check call's premises are the reference and chunks.
    assert "costs $10 a month" not in check.first_user
    # What is checked is the standalone claim (the fake's verdicts are word overlap only).
    assert "c1: The Starter plan includes 24/7 phone support." in check.first_user
    # The single-turn prompt and the judge's identity (single-turn cache keys) are as before.
    assert judge.identity() == before and before["prompt_version"] == prompts.PROMPT_VERSION
    single = Sample(**_fields(sample))
    asyncio.run(ascore_sample(single, judge))
    plain = server.chat_requests()[2]
    assert "<history>" not in plain.first_user
    assert plain.messages[0]["content"] == prompts.extract_messages({}, None)[0]["content"]
    assert judge.conversation_version.startswith("ng-conv-2:")


SYSTEM = Turn("system", "You are the support bot of Acme. Customers of the Enterprise plan "
                        "come first.")


def test_system_turns_are_not_the_conversation() -> None:
    """A system prompt is the app's instructions: the plan it names is no entity for "it",
    and a history of system turns only is a single turn (the plain extraction and keys)."""
    sample = Sample(user_input="Does it include SSO?", response="Yes, it includes SSO.",
                    reference="It includes SSO.", retrieved_contexts=["Enterprise plan: SSO."],
                    history=(SYSTEM,))
    alone = Sample(**_fields(sample))
    assert claims_of(sample) == claims_of(alone)

    class SingleTurnOnly(LexicalJudge):
        async def extract_in_conversation(self, text: str, question: str | None,
                                          history: Sequence[Turn]) -> list[str]:
            raise AssertionError(f"called with {history}")

    assert asyncio.run(ascore_sample(sample, SingleTurnOnly())).status == "ok"
    chat = Sample(**_fields(sample), history=(SYSTEM, *STARTER))
    assert [c["text"] for c in claims_of(chat)] == ["The Starter plan includes SSO."]
    assert conversational_spans("Yes, it includes SSO.", "Does it include SSO?", (SYSTEM,)) == \
        conversational_spans("Yes, it includes SSO.", "Does it include SSO?", ())


def test_llm_prompt_leaves_system_turns_out(fake_openai_server: Any) -> None:
    pytest.importorskip("openai")
    from noisegauge.testing import judge_responder

    server = fake_openai_server
    server.responder = _chat_model(judge_responder())
    judge = get_judge("openai:gpt-4o-mini", base_url=server.url, api_key="sk-test-key-123456")
    sample = Sample(user_input="Does it include phone support?",
                    response="Yes, it includes 24/7 phone support.",
                    reference="No, it only includes email support.",
                    retrieved_contexts=["Starter plan: $10 a month, email support only."],
                    history=(SYSTEM, *STARTER))
    assert asyncio.run(ascore_sample(sample, judge)).status == "ok"
    extraction = server.chat_requests()[0].first_user
    assert "<history>\nuser: What does the Starter plan cost?" in extraction
    assert "Enterprise" not in extraction and "system:" not in extraction
    # System turns only: the single-turn prompt, as if there were no history.
    asyncio.run(ascore_sample(Sample(**_fields(sample), history=(SYSTEM,)), judge))
    asyncio.run(ascore_sample(Sample(**_fields(sample)), judge))
    requests = server.chat_requests()
    assert requests[2].messages == requests[4].messages
    assert "<history>" not in requests[2].first_user


@pytest.mark.parametrize("text", ["", "?", "Yes.", "네", "It.", "그건 ", "The same plan.",
                                  "it's hard to say", "이 플랜은 좋아요"])
@pytest.mark.parametrize("question", ["", "?", "And?", "그럼요?", "Does it?", "What about?"])
def test_odd_turns_never_break_extraction(text: str, question: str) -> None:
    history = (Turn("system", "Be nice."), Turn("user", "?"), Turn("assistant", ""),
               Turn("user", "Does the Pro plan include SSO?"))
    for spans in (conversational_spans(text, question, history),
                  conversational_spans(text, question, ())):
        assert all(0 <= c.start <= c.end <= len(text) for c in spans)


def test_an_it_that_stands_for_nothing_is_left_alone() -> None:
    spans = conversational_spans("It's hard to say. It is great that you asked.",
                                 "Does the Pro plan include SSO?", STARTER)
    assert [c.text for c in spans] == [c.text for c in extract_spans(
        "It's hard to say. It is great that you asked.", "Does the Pro plan include SSO?")]


def test_report_view_highlights_a_standalone_claim_in_its_sentence() -> None:
    from noisegauge.report.data import ChunkTable, sample_view

    row = {"index": 0, "status": "ok", "metrics": {},
           "input": {"user_input": "And for monthly plans?", "response": "Seven days.",
                     "reference": "Monthly plans: 7 days.", "retrieved_contexts": [],
                     "history": [{"role": "user", "content": "How long can annual plans be refunded?"},
                                 {"role": "assistant", "content": "30 days."}]},
           "response_claims": [{"text": "Monthly plans can be refunded within seven days.",
                                "bucket": "self_knowledge", "correct": True}]}
    view = sample_view(row, 0, (), ChunkTable())
    assert view["c"][0]["sp"] == [0, 10]
    row["input"] = {**row["input"], "history": []}
    assert "sp" not in sample_view(row, 0, (), ChunkTable())["c"][0]


def test_answer_relevancy_in_a_chat_costs_no_extra_call(fake_openai_server: Any) -> None:
    """In a chat the LLM extracts with the history; Answer Relevancy's questions then come
    from rules over those standalone claims, with no call of their own."""
    pytest.importorskip("openai")
    from noisegauge import AnswerRelevancy, NoiseSensitivity

    judge = get_judge("openai:fake", base_url=fake_openai_server.url, api_key="sk-test")
    sample = Sample(user_input="Does it include phone support?",
                    response="The Starter plan includes 24/7 phone support.",
                    reference="The Starter plan only includes email support.",
                    retrieved_contexts=["Starter plan: email support only."], history=STARTER)
    report = evaluate([sample], [NoiseSensitivity(judge=judge),
                                 AnswerRelevancy(judge=judge, embeddings="hashing")],
                      cache=False, progress=False)
    requests = fake_openai_server.chat_requests()
    assert len(requests) == 2 and "<history>" in requests[0].first_user
    assert "Ask: " not in requests[0].first_user
    ev = report.results[0].relevancy
    assert ev is not None and ev.source == "rules" and ev.questions
    # ...measured against the standalone question, not "Does it include phone support?"
    assert ev.similarities == _similarities("Does the Starter plan include phone support?",
                                            ev.questions)


def _similarities(question: str, questions: Sequence[str]) -> tuple[float, ...]:
    from noisegauge.embeddings import get_embedder
    from noisegauge.engine.relevancy import cosine

    vectors = asyncio.run(get_embedder("hashing").embed([question, *questions]))
    return tuple(round(cosine(vectors[0], v), 6) for v in vectors[1:])


def test_answer_relevancy_in_a_chat_compares_with_the_standalone_question() -> None:
    """"And for monthly plans?" is "How long can monthly plans be refunded?": the offline
    path's questions are compared with that, and the glued question is not echoed back."""
    from noisegauge import AnswerRelevancy
    from noisegauge.scoring.relevancy import asked_question

    sample = Sample(user_input="And for monthly plans?", response="Seven days.",
                    reference="Monthly plans can be refunded within 7 days.",
                    retrieved_contexts=["Monthly plans can be refunded within 7 days."],
                    history=REFUND)
    assert asked_question(sample) == "How long can monthly plans be refunded?"
    assert asked_question(Sample(**_fields(sample))) == "And for monthly plans?"
    report = evaluate([sample], [AnswerRelevancy(judge="lexical", embeddings="hashing")],
                      cache=False, progress=False)
    ev = report.results[0].relevancy
    assert ev is not None and ev.questions
    assert all("How long can monthly plans be refunded" not in q for q in ev.questions)
    assert ev.similarities == _similarities("How long can monthly plans be refunded?",
                                            ev.questions)
    assert ev.similarities != _similarities("And for monthly plans?", ev.questions)


def test_an_echo_keeps_its_pronoun_and_a_far_entity_is_not_taken() -> None:
    assert [c.text for c in conversational_spans("It costs $10.", "Is it cheap?", STARTER)] == \
        ["The Starter plan costs $10."]
    assert [c.text for c in conversational_spans("Yes it was. It certainly is.",
                                                 "Was it cheap?", STARTER)] == \
        ["Yes it was.", "It certainly is."]
    # The plan was named four turns back: too far for a pronoun.
    long_ago = (*STARTER, Turn("user", "hello"), Turn("assistant", "hi there"),
                Turn("user", "ok"), Turn("assistant", "anything else?"))
    assert [c.text for c in conversational_spans("It costs $10.", "so?", long_ago)] == \
        ["It costs $10."]
