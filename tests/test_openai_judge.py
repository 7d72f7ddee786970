"""The OpenAI judge over real HTTP (official SDK) against the local fake server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from batch_helpers import RAGAS_EXAMPLES, require_extra
from noisegauge import Sample, Verdict, get_judge
from noisegauge.errors import InvalidInput, JudgeOutputError, JudgeUnavailable
from noisegauge.judges.base import metered
from noisegauge.judges.llm.judge import OpenAIJudge
from noisegauge.judges.llm.prompts import PROMPT_VERSION
from noisegauge.scoring import ascore_sample
from noisegauge.testing import FakeOpenAIServer, FakeRequest, Fault, drop_ids, judge_responder

require_extra("openai")

LIC = json.loads(RAGAS_EXAMPLES.read_text())["examples"][0]

PREMISES = ["Paris is the capital of France.", "The Eiffel Tower is in Paris.",
            "Berlin is the capital of Germany."]
CLAIMS = ["Paris is the capital of France", "The Eiffel Tower is in Paris",
          "Berlin is the capital of Germany", "Rome is the capital of Italy"]
EXPECTED = [[Verdict.ENTAILED if c.rstrip(".") in p else Verdict.NEUTRAL for c in CLAIMS]
            for p in PREMISES]


def judge_for(server: FakeOpenAIServer, **settings: Any) -> OpenAIJudge:
    judge = get_judge("openai:gpt-4o-mini", base_url=server.url, api_key="sk-test-key-123456",
                      **settings)
    assert isinstance(judge, OpenAIJudge)
    return judge


def check_many(judge: OpenAIJudge, premises: list[str] = PREMISES,
               claims: list[str] = CLAIMS) -> tuple[list[list[Verdict]], Any]:
    async def run() -> tuple[list[list[Verdict]], Any]:
        with metered() as usage:
            result = await judge.check_many(premises, claims)
        return result, usage
    return asyncio.run(run())


def user_text(request: FakeRequest) -> str:
    return request.first_user


def asked_pairs(request: FakeRequest) -> dict[str, list[str]]:
    """premise id -> claim ids the request's schema requires."""
    schema = request.schema
    return {p: schema["$defs"][schema["properties"][p]["$ref"].rsplit("/", 1)[1]]["required"]
            for p in schema["required"]}


# -- structured output, ids and call counts ------------------------------------------------

def test_joint_check_is_one_strict_schema_call_that_requires_every_id(fake_openai_server):
    verdicts, usage = check_many(judge_for(fake_openai_server))
    assert verdicts == EXPECTED
    (req,) = fake_openai_server.chat_requests()
    assert req.mode == "json_schema"
    fmt = req.body["response_format"]["json_schema"]
    assert fmt["strict"] is True
    assert fmt["schema"]["additionalProperties"] is False
    assert asked_pairs(req) == {p: ["c1", "c2", "c3", "c4"] for p in ("p1", "p2", "p3")}
    assert req.body["temperature"] == 0 and req.body["seed"] == 0
    assert usage.calls == 1
    assert usage.prompt_tokens == req.prompt_tokens > 0
    assert usage.completion_tokens > 0


def test_verdicts_are_matched_by_id_not_position(fake_openai_server):
    # The "model" answers claim-major with keys in reverse order and odd spelling.
    def respond(request: FakeRequest, choice: int) -> str:
        base = json.loads(judge_responder()(request, choice))
        flipped: dict[str, dict[str, str]] = {}
        for pid, row in base.items():
            for cid, v in row.items():
                flipped.setdefault(cid.upper(), {})[pid] = v.capitalize()
        return json.dumps(dict(reversed(list(flipped.items()))))
    fake_openai_server.responder = respond
    verdicts, _ = check_many(judge_for(fake_openai_server))
    assert verdicts == EXPECTED


def test_lic_example_all_metrics_both_modes_in_two_calls(fake_openai_server):
    judge = judge_for(fake_openai_server)
    result = asyncio.run(ascore_sample(Sample.from_record(LIC), judge))
    assert result.status == "ok"
    assert result.usage.calls == 2 == len(fake_openai_server.chat_requests())
    extraction, check = fake_openai_server.chat_requests()
    # Response and reference in one extraction; each chunk sent once for both matrices.
    assert "<t1>" in extraction.first_user and "<t2>" in extraction.first_user
    for chunk in LIC["retrieved_contexts"]:
        assert check.first_user.count(chunk) == 1
    pairs = asked_pairs(check)
    n_resp, n_ref = len(result.verdicts.response_claims), len(result.verdicts.reference_claims)
    assert sorted(len(cs) for cs in pairs.values()) == sorted(
        [n_resp, n_ref] + [n_resp + n_ref] * len(LIC["retrieved_contexts"]))
    assert result.usage.prompt_tokens == sum(r.prompt_tokens for r in fake_openai_server.requests)
    assert result.value("noise_sensitivity_relevant") is not None


@pytest.mark.parametrize(("strategy", "calls"), [("joint", 1), ("per_premise", 3),
                                                  ("per_claim_group", 6)])
def test_strategies_agree_on_verdicts_and_differ_in_calls(fake_openai_server, strategy, calls):
    judge = judge_for(fake_openai_server, strategy=strategy, group_size=3)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED
    assert usage.calls == calls


def test_joint_splits_calls_over_the_prompt_budget(fake_openai_server):
    verdicts, usage = check_many(judge_for(fake_openai_server, max_prompt_tokens=40))
    assert verdicts == EXPECTED
    assert usage.calls > 1
    pairs = [(p, c) for r in fake_openai_server.chat_requests()
             for p, cs in asked_pairs(r).items() for c in cs]
    assert sorted(pairs) == sorted((f"p{i}", f"c{j}") for i in range(1, 4) for j in range(1, 5))


def test_blank_premise_costs_nothing_and_entails_nothing(fake_openai_server):
    verdicts, usage = check_many(judge_for(fake_openai_server), ["  ", PREMISES[0]], CLAIMS[:2])
    assert verdicts[0] == [Verdict.NEUTRAL, Verdict.NEUTRAL]
    assert verdicts[1] == [Verdict.ENTAILED, Verdict.NEUTRAL]
    assert usage.calls == 1 and list(asked_pairs(fake_openai_server.requests[0])) == ["p1"]


def test_extract_returns_the_claims_and_sends_the_question(fake_openai_server):
    judge = judge_for(fake_openai_server)
    claims = asyncio.run(judge.extract("Paris is big. It has a tower.", "Tell me about Paris"))
    assert claims == ["Paris is big.", "It has a tower."]
    assert user_text(fake_openai_server.requests[0]).startswith(
        "Question: Tell me about Paris\n\n<t1>\nParis is big.")
    assert asyncio.run(judge.extract("   ")) == [] and len(fake_openai_server.requests) == 1


# -- output-mode fallbacks and repairs -------------------------------------------------------

def test_server_without_json_schema_falls_back_to_json_mode_with_schema_and_remembers(
        fake_openai_server):
    fake_openai_server.json_schema = False
    judge = judge_for(fake_openai_server)
    assert check_many(judge)[0] == EXPECTED
    assert check_many(judge)[0] == EXPECTED
    requests = fake_openai_server.chat_requests()
    assert [(r.mode, r.status) for r in requests] == [
        ("json_schema", 400), ("json_object", 200), ("json_object", 200)]
    # json_object with the schema inline (what llama-cpp-python enforces)
    assert requests[1].body["response_format"]["schema"]["required"] == ["p1", "p2", "p3"]
    assert judge.stats.mode_fallbacks == 1
    assert judge.endpoint_report()["output_mode"] == "json_object_schema"


def test_server_without_any_json_mode_is_read_from_chatty_text(fake_openai_server):
    fake_openai_server.json_schema = fake_openai_server.json_object = False
    fake_openai_server.chatty_text = True
    verdicts, usage = check_many(judge_for(fake_openai_server))
    assert verdicts == EXPECTED
    # Each refused mode costs one request: JSON Schema, json_object+schema, json_object.
    assert [r.mode for r in fake_openai_server.chat_requests()] == [
        "json_schema", "json_object", "json_object", "text"]
    assert usage.calls == 1 and usage.fallbacks == 3  # refused requests are not answered calls


def test_invalid_json_is_asked_again_with_a_correction(fake_openai_server):
    fake_openai_server.add_fault(content="Sorry, I cannot produce that.")
    judge = judge_for(fake_openai_server)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED
    second = fake_openai_server.chat_requests()[1]
    assert second.messages[-2] == {"role": "assistant", "content": "Sorry, I cannot produce that."}
    assert usage.calls == 2 and judge.stats.repairs == 1


def test_missing_ids_are_re_asked_alone(fake_openai_server):
    fake_openai_server.add_fault(transform=drop_ids("c2"))
    judge = judge_for(fake_openai_server)
    verdicts, _ = check_many(judge)
    assert verdicts == EXPECTED
    retry = fake_openai_server.chat_requests()[1]
    assert asked_pairs(retry) == {"p1": ["c2"], "p2": ["c2"], "p3": ["c2"]}
    assert "c1:" not in user_text(retry) and "c2: The Eiffel Tower" in user_text(retry)


def test_a_claim_that_never_gets_a_verdict_is_an_error_not_a_guess(fake_openai_server):
    fake_openai_server.add_fault(transform=drop_ids("c3"), times=10)
    with pytest.raises(JudgeOutputError, match=r"c3 \('Berlin is the capital"):
        check_many(judge_for(fake_openai_server, max_repairs=2))
    assert len(fake_openai_server.chat_requests()) == 3


def test_sample_with_unanswerable_claim_becomes_an_error_row(fake_openai_server):
    fake_openai_server.add_fault(transform=drop_ids("c1"), times=100,
                                 when=lambda r: "Claims:" in r.first_user)
    result = asyncio.run(ascore_sample(Sample.from_record(LIC), judge_for(fake_openai_server)))
    assert result.status == "error"
    assert "JudgeOutputError" in (result.reason or "") and "c1" in (result.reason or "")
    assert all(v is None for v in result.to_row()["metrics"].values())


def test_truncated_verdicts_are_re_asked_for_the_rest_with_more_tokens(fake_openai_server):
    cut = '{"p1": {"c1": "entailed", "c2": "neutral", "c3": "neutral", "c4": "neutral"}, "p2": {"c1": "neu'
    fake_openai_server.add_fault(content=cut, finish_reason="length")
    verdicts, _ = check_many(judge_for(fake_openai_server))
    assert verdicts == EXPECTED
    first, retry = fake_openai_server.chat_requests()
    assert retry.body["max_tokens"] == 2 * first.body["max_tokens"]
    assert asked_pairs(retry) == {p: ["c1", "c2", "c3", "c4"] for p in ("p2", "p3")}


def test_truncated_claim_list_is_not_used_partially(fake_openai_server):
    fake_openai_server.add_fault(content='{"t1": ["Paris is big.", "It has', finish_reason="length")
    judge = judge_for(fake_openai_server)
    assert asyncio.run(judge.extract("Paris is big. It has a tower.")) == ["Paris is big.",
                                                                          "It has a tower."]
    first, retry = fake_openai_server.chat_requests()
    assert retry.body["max_tokens"] == 2 * first.body["max_tokens"]


def test_server_side_max_tokens_cut_is_detected(fake_openai_server):
    # The fake server cuts answers longer than max_tokens, as a real one does.
    with pytest.raises(JudgeOutputError, match="max_output_tokens"):
        check_many(judge_for(fake_openai_server, max_output_tokens=8))


# -- transport: retries, Retry-After, timeouts, auth -------------------------------------------

def test_429_with_retry_after_is_honoured_and_counted(fake_openai_server, fast_retries):
    fake_openai_server.add_fault(status=429, retry_after=0.25)
    judge = judge_for(fake_openai_server)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED
    assert fast_retries[0] == pytest.approx(0.25)
    assert usage.calls == 1 and usage.retries == 1 and judge.stats.retries == 1


def test_500_is_retried_with_backoff(fake_openai_server, fast_retries):
    fake_openai_server.add_fault(status=500, times=2)
    verdicts, usage = check_many(judge_for(fake_openai_server))
    assert verdicts == EXPECTED and usage.retries == 2
    assert len(fast_retries) == 2 and all(0 <= d <= 1.0 for d in fast_retries)


def test_persistent_503_gives_up_with_a_clear_error(fake_openai_server, fast_retries):
    fake_openai_server.add_fault(status=503, times=100)
    with metered() as usage, pytest.raises(JudgeUnavailable, match="gave up after 3 attempts"):
        asyncio.run(judge_for(fake_openai_server, max_retries=2).check(PREMISES[0], CLAIMS))
    assert usage.retries == 2 and len(fake_openai_server.chat_requests()) == 3


def test_slow_answer_times_out_and_is_retried(fake_openai_server, fast_retries):
    fake_openai_server.add_fault(delay=1.5)
    verdicts, usage = check_many(judge_for(fake_openai_server, timeout=0.3))
    assert verdicts == EXPECTED and usage.retries == 1


def test_bad_key_fails_fast_and_never_shows_the_key(fake_openai_server, caplog):
    fake_openai_server.api_key = "sk-right-key-000000"
    judge = get_judge("openai:gpt-4o-mini", base_url=fake_openai_server.url,
                      api_key="sk-wrong-SECRET-999999")
    caplog.set_level("DEBUG")
    with pytest.raises(JudgeUnavailable) as info:
        asyncio.run(judge.check(PREMISES[0], CLAIMS))
    assert "401" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert len(fake_openai_server.requests) == 1  # not retried
    for text in (str(info.value), repr(judge), json.dumps(judge.identity()), caplog.text):
        assert "SECRET" not in text


def test_key_never_reaches_results_or_identity(fake_openai_server, caplog, monkeypatch):
    secret = "sk-proj-SECRET-abcdef123456"
    fake_openai_server.api_key = secret
    fake_openai_server.add_fault(status=500, body={"error": {"message": f"boom {secret}"}},
                                 times=100)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    caplog.set_level("DEBUG")
    judge = get_judge("openai:gpt-4o-mini", base_url=fake_openai_server.url, max_retries=0)
    result = asyncio.run(ascore_sample(Sample.from_record(LIC), judge))
    assert result.status == "error" and "boom" in (result.reason or "")
    for text in (json.dumps(result.to_row()), result.reason or "", repr(judge),
                 json.dumps(judge.identity()), caplog.text):
        assert secret not in text
    assert fake_openai_server.requests[0].headers["authorization"] == f"Bearer {secret}"


def test_identity_names_what_changes_answers_and_strips_url_credentials():
    judge = OpenAIJudge("m", base_url="https://u:pw@example.com/v1?token=abc", api_key="k")
    ident = judge.identity()
    assert ident["base_url"] == "https://example.com/v1"
    assert ident["prompt_version"] == PROMPT_VERSION and ident["model"] == "m"
    assert OpenAIJudge("m", base_url="https://example.com/v1", strategy="per_premise"
                       ).identity() != ident


def test_environment_is_read_and_never_written(fake_openai_server, monkeypatch):
    import os
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-77777777")
    before = dict(os.environ)
    judge = get_judge("openai:gpt-4o-mini")
    assert asyncio.run(judge.check(PREMISES[0], CLAIMS[:1])) == [Verdict.ENTAILED]
    assert fake_openai_server.requests[0].headers["authorization"] == "Bearer sk-env-key-77777777"
    assert dict(os.environ) == before


def test_concurrency_is_limited_per_endpoint(fake_openai_server):
    fake_openai_server.latency = 0.05
    judge = judge_for(fake_openai_server, strategy="per_claim_group", group_size=1,
                      max_concurrency=2)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED and usage.calls == 12
    assert fake_openai_server.max_in_flight == 2


def test_sync_scoring_twice_reuses_nothing_from_a_closed_loop(fake_openai_server):
    from noisegauge import NoiseSensitivity
    metric = NoiseSensitivity(judge=judge_for(fake_openai_server), mode="relevant")
    first = metric.score(Sample.from_record(LIC))
    second = metric.score(Sample.from_record(LIC))
    assert first.status == second.status == "ok" and first.value == second.value


# -- cost, votes, options --------------------------------------------------------------------

def test_cost_is_tokens_times_price(fake_openai_server):
    _, usage = check_many(judge_for(fake_openai_server))
    expected = (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.60) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    judge = get_judge("openai:local-llama", base_url=fake_openai_server.url,
                      prices={"local-llama": (1.0, 3.0)})
    _, usage = check_many(judge)
    assert usage.cost_usd == pytest.approx((usage.prompt_tokens + 3 * usage.completion_tokens) / 1e6)


def test_unknown_price_or_missing_usage_is_unknown_cost_not_zero(fake_openai_server):
    _, usage = check_many(get_judge("openai:local-llama", base_url=fake_openai_server.url))
    assert usage.prompt_tokens > 0 and usage.cost_usd is None
    fake_openai_server.report_usage = False
    _, usage = check_many(judge_for(fake_openai_server))
    assert usage.calls == 1 and usage.prompt_tokens == 0 and usage.cost_usd is None


def _flip_third_vote(request: FakeRequest, choice: int) -> str:
    answer = json.loads(judge_responder()(request, choice))
    if choice == 2:  # the third vote disagrees on every verdict
        answer = {p: {c: ("neutral" if v == "entailed" else "entailed") for c, v in row.items()}
                  for p, row in answer.items()}
    return json.dumps(answer)


def test_votes_take_the_majority_and_report_agreement(fake_openai_server):
    fake_openai_server.responder = _flip_third_vote
    judge = judge_for(fake_openai_server, votes=3)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED
    (req,) = fake_openai_server.chat_requests()
    assert req.body["n"] == 3 and req.body["temperature"] == 0.7
    assert usage.calls == 1
    assert judge.stats.voted_verdicts == 12 and judge.stats.agreement == 0.0
    assert judge.stats.mean_majority_share == pytest.approx(2 / 3)


def test_votes_on_a_server_that_ignores_n(fake_openai_server):
    fake_openai_server.max_choices = 1
    fake_openai_server.responder = _flip_third_vote
    judge = judge_for(fake_openai_server, votes=3)
    verdicts, usage = check_many(judge)
    assert verdicts == EXPECTED and usage.calls == 3
    seeds = [r.body["seed"] for r in fake_openai_server.chat_requests()]
    assert seeds == [0, 1, 2]


def test_tied_votes_are_neutral(fake_openai_server):
    fake_openai_server.responder = _flip_third_vote
    judge = judge_for(fake_openai_server, votes=2, temperature=0.5)
    fake_openai_server.responder = lambda r, i: _flip_third_vote(r, 2 if i == 1 else 0)
    verdicts, _ = check_many(judge)
    assert all(v is Verdict.NEUTRAL for row in verdicts for v in row)
    assert fake_openai_server.requests[0].body["temperature"] == 0.5


def test_bad_options_are_rejected_by_name():
    with pytest.raises(InvalidInput, match="unknown option.*max_tokenz"):
        get_judge("openai:m", max_tokenz=5)
    with pytest.raises(InvalidInput, match="strategy"):
        get_judge("openai:m", strategy="all_at_once")
    with pytest.raises(InvalidInput, match="needs a model"):
        get_judge("openai")


def test_missing_openai_package_names_the_extra(monkeypatch):
    import sys

    from noisegauge.errors import MissingDependency
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingDependency, match=r"pip install '\.\[openai\]'"):
        get_judge("openai:gpt-4o-mini")


def test_fault_only_hits_matching_requests(fake_openai_server):
    fault = Fault(status=500, when=lambda r: "<t1>" in r.first_user, times=1)
    fake_openai_server.add_fault(fault)
    check_many(judge_for(fake_openai_server))  # a check request: not matched
    assert fault.times == 1 and fake_openai_server.requests[0].status == 200


def test_concurrent_samples_keep_their_own_calls_and_usage(fake_openai_server):
    other = dict(LIC, response="LIC sells insurance.", reference="LIC is an insurer.",
                 retrieved_contexts=["LIC sells insurance in India."])

    async def both():
        judge = judge_for(fake_openai_server)
        return await asyncio.gather(ascore_sample(Sample.from_record(LIC), judge),
                                    ascore_sample(Sample.from_record(other), judge))
    first, second = asyncio.run(both())
    assert first.usage.calls == second.usage.calls == 2
    requests = fake_openai_server.chat_requests()
    mine = [r for r in requests if "LIC sells insurance" in r.first_user]
    assert len(requests) == 4 and len(mine) == 2
    assert second.usage.prompt_tokens == sum(r.prompt_tokens for r in mine)


def test_identical_texts_are_extracted_once(fake_openai_server):
    async def run():
        judge = judge_for(fake_openai_server)
        return await asyncio.gather(judge.extract("Same text.", "q"), judge.extract("Same text.", "q"))
    assert asyncio.run(run()) == [["Same text."], ["Same text."]]
    (req,) = fake_openai_server.chat_requests()
    assert "<t2>" not in req.first_user


def test_a_missing_text_is_re_asked_alone(fake_openai_server):
    fake_openai_server.add_fault(transform=drop_ids("t2"))

    async def run():
        judge = judge_for(fake_openai_server)
        return await asyncio.gather(judge.extract("One. Two.", "q"), judge.extract("Three.", "q"))
    assert asyncio.run(run()) == [["One.", "Two."], ["Three."]]
    retry = fake_openai_server.chat_requests()[1]
    assert "<t2>\nThree.\n</t2>" in retry.first_user and "<t1>" not in retry.first_user


def test_wrong_base_url_says_what_to_check(fake_openai_server):
    judge = get_judge("openai:m", base_url=fake_openai_server.url.removesuffix("/v1"))
    with pytest.raises(JudgeUnavailable, match="404.*ends in /v1"):
        asyncio.run(judge.check(PREMISES[0], CLAIMS))


def test_unreachable_server_is_retried_then_reported(fast_retries, monkeypatch):
    import socket
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = get_judge("openai:m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(JudgeUnavailable, match="server running.*gave up after 3 attempts"):
        asyncio.run(judge.check(PREMISES[0], CLAIMS))
    assert len(fast_retries) == 2
